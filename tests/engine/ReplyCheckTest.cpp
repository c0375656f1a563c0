//===- ReplyCheckTest.cpp - Hand-made executor replies, checked -----------===//
//
// What the executor returns is decoded by pure functions (bytes in, a
// checked result or an error out): these feed them replies with bad sizes,
// counts and spans, as a hostile or mismatched executor could send, and
// expect a clear error each time, never a crash or bytes from outside the
// buffers. The same functions are fuzzed in fuzz/.
//
//===----------------------------------------------------------------------===//

#include "Memref.h"
#include "transfer/CheckedCall.h"
#include "transfer/OutputReplies.h"
#include "transfer/ZeroCopyResult.h"
#include "wire/SpsCheck.h"

#include <climits>
#include <gtest/gtest.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;

namespace {

namespace sps = llvm::orc::shared;

::testing::AssertionResult failsSaying(Error Err, const std::string &What) {
  if (!Err)
    return ::testing::AssertionFailure() << "succeeded; expected an error saying '" << What << "'";
  std::string Msg = toString(std::move(Err));
  if (Msg.find(What) == std::string::npos)
    return ::testing::AssertionFailure() << "error '" << Msg << "' does not say '" << What << "'";
  return ::testing::AssertionSuccess();
}

template <typename T>
::testing::AssertionResult failsSaying(Expected<T> E, const std::string &What) {
  return failsSaying(E ? Error::success() : E.takeError(), What);
}

std::vector<char> le64(std::initializer_list<uint64_t> Words) {
  std::vector<char> Bytes;
  for (uint64_t W : Words) {
    char B[8];
    support::endian::write64le(B, W);
    Bytes.insert(Bytes.end(), B, B + 8);
  }
  return Bytes;
}

template <typename Tag> bool walks(const std::vector<char> &Bytes) {
  return wire::spsWellFormed<Tag>(Bytes.data(), Bytes.size());
}

TEST(SpsCheckTest, CountsMustBeCoveredByTheBytesThatRemain) {
  using Seq = sps::SPSArgList<sps::SPSSequence<uint64_t>>;
  EXPECT_TRUE(walks<Seq>(le64({2, 7, 8})));
  EXPECT_FALSE(walks<Seq>(le64({3, 7, 8}))) << "one element short";
  EXPECT_FALSE(walks<Seq>(le64({uint64_t(1) << 61}))) << "a huge count in eight bytes";
  EXPECT_FALSE(walks<Seq>(le64({uint64_t(-1) / 8 + 2, 1}))) << "a count whose bytes wrap";
  EXPECT_FALSE(walks<Seq>(le64({1, 7, 8}))) << "bytes left over";
  using Nested = sps::SPSArgList<sps::SPSSequence<sps::SPSSequence<int64_t>>>;
  EXPECT_TRUE(walks<Nested>(le64({2, 1, 5, 0})));
  EXPECT_FALSE(walks<Nested>(le64({2, 1, 5, uint64_t(1) << 60})));
}

TEST(SpsCheckTest, ErrorsAndExpectedsWalkTheirMessage) {
  using Exp = sps::SPSArgList<sps::SPSExpected<sps::SPSExecutorAddr>>;
  std::vector<char> Value = {1};
  auto Addr = le64({0x1000});
  Value.insert(Value.end(), Addr.begin(), Addr.end());
  EXPECT_TRUE(walks<Exp>(Value));
  std::vector<char> Huge = {0};
  auto Count = le64({uint64_t(1) << 62});
  Huge.insert(Huge.end(), Count.begin(), Count.end());
  EXPECT_FALSE(walks<Exp>(Huge)) << "an error message of 2^62 bytes";
  EXPECT_FALSE(walks<sps::SPSArgList<sps::SPSError>>(Huge));
  EXPECT_TRUE(walks<sps::SPSArgList<sps::SPSError>>({0}));
}

// Found by fuzzing (fuzz/corpus/frames/regress-hangup-bool): LLVM copies a
// bool's byte as it is, and a flag of 33 was an invalid bool.
TEST(SpsCheckTest, BoolsAreZeroOrOne) {
  EXPECT_TRUE(walks<sps::SPSArgList<bool>>({1}));
  EXPECT_FALSE(walks<sps::SPSArgList<bool>>({33}));
  EXPECT_FALSE(walks<sps::SPSArgList<sps::SPSError>>({2}));
  EXPECT_FALSE(walks<sps::SPSArgList<sps::SPSExpected<uint64_t>>>({65, 0, 0, 0, 0, 0, 0, 0, 0}));
  std::vector<char> Flags = le64({1});
  Flags.push_back(7);
  EXPECT_FALSE(walks<sps::SPSArgList<sps::SPSSequence<bool>>>(Flags));
}

TEST(CheckedCallTest, AReplyThatDoesNotWalkIsAnError) {
  using Sig = sps::SPSExpected<sps::SPSExecutorAddr>(uint64_t);
  auto Bad = sps::WrapperFunctionBuffer::copyFrom("\0\xff\xff\xff\xff\xff\xff\xff\x7f", 9);
  auto R = checkedReply<Sig>(std::move(Bad), "the slab service");
  ASSERT_NE(R.getOutOfBandError(), nullptr);
  EXPECT_STREQ(R.getOutOfBandError(), "malformed reply from the executor to the slab service");
}

// A rank-1 descriptor over Values.
std::vector<char> descOver(const void *Values, int64_t Size, int64_t Stride) {
  Desc D(1, 1);
  D.setAllocated(Values);
  D.setAligned(Values);
  D.setSize(0, Size);
  D.setStride(0, Stride);
  const char *P = static_cast<const char *>(D.data());
  return std::vector<char>(P, P + D.byteSize());
}

TEST(OutputRepliesTest, TheDescriptorAreaMustMatchTheRanks) {
  char Values[4] = {1, 2, 3, 4};
  Desc Out(1, 1);
  std::vector<MemrefArg> Outs = {{Out.data(), 1, 1}};
  std::vector<char> Rv = descOver(Values, 4, 1);
  EXPECT_TRUE(bool(decodeReturned(Rv, Outs)));
  EXPECT_TRUE(failsSaying(decodeReturned(ArrayRef<char>(Rv).drop_back(8), Outs),
                          "32 bytes of output descriptors, expected 40 for 1 outputs"));
  EXPECT_TRUE(failsSaying(decodeReturned({}, Outs), "0 bytes of output descriptors"));
  std::vector<char> Wrapping = descOver(Values, 2, INT64_MAX);
  EXPECT_TRUE(failsSaying(decodeReturned(Wrapping, Outs), "output 0: "));
}

TEST(OutputRepliesTest, ReadBuffersMustMatchTheSpansAskedFor) {
  std::vector<ExecutorAddrRange> Spans = {{ExecutorAddr(0x1000), ExecutorAddrDiff(16)}};
  EXPECT_TRUE(failsSaying(checkRead({}, Spans), "0 buffers read for 1 spans"));
  std::vector<std::vector<uint8_t>> Short = {std::vector<uint8_t>(15)};
  EXPECT_TRUE(failsSaying(checkRead(Short, Spans), "buffer 0 holds 15 bytes for a span of 16"));
  std::vector<std::vector<uint8_t>> Right = {std::vector<uint8_t>(16)};
  EXPECT_FALSE(bool(checkRead(Right, Spans)));
}

// Every other byte of 8, reversed: the span is 7 bytes, the output 4.
TEST(OutputRepliesTest, UnpackingTakesOnlyFromTheSpanRead) {
  char Remote[8] = {};
  Desc Out(1, 1);
  std::vector<MemrefArg> Outs = {{Out.data(), 1, 1}};
  std::vector<char> Rv = descOver(Remote + 6, 4, -2);
  auto Returned = decodeReturned(Rv, Outs);
  ASSERT_TRUE(bool(Returned)) << toString(Returned.takeError());
  const ReturnedOutput &O = (*Returned)[0];
  EXPECT_EQ(O.Span.Start, ExecutorAddr::fromPtr(Remote));
  ASSERT_EQ(O.Layout.SpanBytes, 7u);
  std::vector<uint8_t> Span = {10, 11, 12, 13, 14, 15, 16};
  std::vector<char> Dst(4);
  ASSERT_FALSE(bool(unpackOutput(O, 0, Span, Dst)));
  EXPECT_EQ(Dst, (std::vector<char>{16, 14, 12, 10}));
  // A buffer of its own, sized exactly: were the check gone, the copy would
  // read past its end, which ASan reports (docs/ci.md).
  std::vector<uint8_t> Short(Span.begin(), Span.end() - 1);
  EXPECT_TRUE(
      failsSaying(unpackOutput(O, 0, Short, Dst), "output 0: 6 bytes read for a 7-byte span"));
  std::vector<char> Small(3);
  EXPECT_TRUE(failsSaying(unpackOutput(O, 0, Span, Small), "3 to fill for 4"));
}

// The span of elements 0 and INT64_MAX, then INT64_MIN, wraps to zero
// elements: the host would have copied from wild addresses.
TEST(LayoutTest, SpansThatWrapAreRefused) {
  char Buf[8];
  Desc D(2, 1);
  D.setAligned(Buf);
  D.setSize(0, 2);
  D.setSize(1, 2);
  D.setStride(0, INT64_MAX);
  D.setStride(1, INT64_MIN);
  wire::MemrefDesc View(D.data(), 2);
  EXPECT_TRUE(failsSaying(wire::layoutOf(View, 1, {"input", 0}).takeError(),
                          "input 0: the span of its elements"));
  Desc Far(1, 1);
  Far.setAligned(Buf);
  Far.setSize(0, 2);
  Far.setStride(0, 1);
  Far.setOffset(INT64_MIN / 2);
  wire::MemrefDesc FarView(Far.data(), 1);
  EXPECT_TRUE(failsSaying(wire::layoutOf(FarView, 1, {"input", 0}).takeError(),
                          "addressed range overflows"));
  Far.setOffset(-reinterpret_cast<intptr_t>(Buf) + 1);
  EXPECT_TRUE(bool(wire::layoutOf(FarView, 1, {"input", 0}))) << "address 1 to 2 is a range";
}

// The zero-copy result: outputs {sizes, bytes}, counted against the launch.
std::vector<char> zeroCopyResult(const std::string &Error,
                                 const std::vector<wire::ZeroCopyOutput> &Outs) {
  uint64_t Ns = 0;
  std::vector<char> Plan(wire::SPSZeroCopyResult::size(Error, Outs, Ns, Ns, Ns, Ns, Ns));
  sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  EXPECT_TRUE(wire::SPSZeroCopyResult::serialize(OB, Error, Outs, Ns, Ns, Ns, Ns, Ns));
  return Plan;
}

// The largest buffer a decode asked the host for.
size_t LargestAsked = 0;
void *countingMalloc(size_t Bytes) {
  LargestAsked = std::max(LargestAsked, Bytes);
  return std::malloc(Bytes);
}

TEST(ZeroCopyResultTest, CountsAndSizesMustMatchTheLaunch) {
  Desc Out(1, 4);
  std::vector<MemrefArg> Specs = {{Out.data(), 1, 4}};
  LargestAsked = 0;
  auto Decode = [&](const std::vector<char> &Plan, uint64_t Payload) {
    HostOutputs Outputs(Specs, {countingMalloc, std::free});
    ZeroCopyResult R;
    std::vector<iovec> Dst;
    return decodeZeroCopyResult(Plan, Payload, Outputs, R, Dst);
  };
  EXPECT_FALSE(bool(Decode(zeroCopyResult("", {{{4}, 16}}), 16)));
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("", {}), 0), "0 outputs, expected 1"));
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("", {{{4}, 12}}), 12),
                          "output 0 has 12 bytes for its shape's 16"));
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("", {{{4}, 16}}), 20),
                          "payload of 20 bytes for outputs of 16"));
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("", {{{4, 4}, 16}}), 16),
                          "executor returned rank 2, expected 1"));
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("no", {}), 8), "an error with a payload"));
  // Found by fuzzing (fuzz/corpus/zerocopy-result/regress-shape-before-bytes):
  // the host allocated for the shape (2^40 elements here) before comparing
  // its bytes with the count and the payload.
  EXPECT_TRUE(failsSaying(Decode(zeroCopyResult("", {{{int64_t(1) << 40}, 16}}), 16),
                          "output 0 has 16 bytes for its shape's 4398046511104"));
  EXPECT_EQ(LargestAsked, 16u) << "no buffer beyond the payload was asked for";
  std::vector<char> Huge = le64({uint64_t(1) << 61});
  EXPECT_TRUE(failsSaying(Decode(Huge, 0), "undecodable plan"));
  EXPECT_TRUE(Out.allZero()) << "every failure left the output zeroed";
}

} // namespace
