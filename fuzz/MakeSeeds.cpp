//===- MakeSeeds.cpp - Writes the fuzz targets' seed corpora --------------===//
//
// `catalyst-remote-fuzz-seeds DIR` writes a few well-formed inputs per
// target into DIR/<target>/, in the order FuzzInput.h reads them, encoded
// by the same SPS code the peers use. The committed corpora under
// fuzz/corpus/ came from it (tools/fuzz --write-seeds).
//
//===----------------------------------------------------------------------===//

#include "wire/MemrefLayout.h"
#include "wire/Protocol.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"
#include "wire/SpsCheck.h"

#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace catalyst::remote;
using namespace llvm;
using namespace llvm::orc;
namespace sps = llvm::orc::shared;

namespace {

using Bytes = std::vector<char>;

template <typename T> void put(Bytes &B, T V) {
  const char *P = reinterpret_cast<const char *>(&V);
  B.insert(B.end(), P, P + sizeof(T));
}
void append(Bytes &B, const Bytes &More) {
  B.insert(B.end(), More.begin(), More.end());
}

template <typename SPSArgs, typename... Ts> Bytes encode(const Ts &...Vs) {
  Bytes B(SPSArgs::size(Vs...));
  sps::SPSOutputBuffer OB(B.data(), B.size());
  if (!SPSArgs::serialize(OB, Vs...))
    report_fatal_error("cannot encode a seed");
  return B;
}

Bytes header(uint64_t MsgSize, uint64_t OpC, uint64_t SeqNo, uint64_t Tag) {
  Bytes B;
  for (uint64_t W : {MsgSize, OpC, SeqNo, Tag})
    put(B, W);
  return B;
}

// An .npy file: magic, version, header length, Dict padded to 64 bytes,
// then Values bytes.
Bytes npy(int Major, const std::string &Dict, size_t Values) {
  size_t Prefix = Major == 1 ? 10 : 12;
  std::string Text = Dict;
  Text.append((64 - (Prefix + Text.size() + 1) % 64) % 64, ' ');
  Text += '\n';
  Bytes B = {'\x93', 'N', 'U', 'M', 'P', 'Y', char(Major), 0};
  if (Major == 1)
    put(B, uint16_t(Text.size()));
  else
    put(B, uint32_t(Text.size()));
  B.insert(B.end(), Text.begin(), Text.end());
  for (size_t I = 0; I < Values; ++I)
    B.push_back(char(I * 7));
  return B;
}

// A descriptor: allocated, aligned, offset, sizes, strides.
Bytes desc(uint64_t Aligned, int64_t Offset, std::vector<int64_t> Sizes,
           std::vector<int64_t> Strides) {
  Bytes B;
  put(B, Aligned);
  put(B, Aligned);
  put(B, Offset);
  for (int64_t S : Sizes)
    put(B, S);
  for (int64_t S : Strides)
    put(B, S);
  return B;
}

// FuzzInput.h's outputs: count, then rank and element size index each.
Bytes outputs(std::vector<std::pair<uint8_t, uint8_t>> RankElem) {
  Bytes B = {char(RankElem.size())};
  for (auto [Rank, Elem] : RankElem) {
    B.push_back(char(Rank));
    B.push_back(char(Elem));
  }
  return B;
}

// A read of spans of the lengths they ask for, holding Fill.
Bytes honestRead(size_t SpanBytes) {
  Bytes B = {0};
  B.resize(1 + SpanBytes, 7);
  return B;
}

uint64_t Ns = 1000;

std::vector<std::pair<std::string, Bytes>> seeds() {
  std::vector<std::pair<std::string, Bytes>> S;
  // Frames.
  Bytes Call = header(48, uint64_t(SimpleRemoteEPCOpcode::CallWrapper), 1, 0x1000);
  Call.resize(48, 1);
  std::string Hangup = wire::encodeHangupFrame("going away");
  Bytes Payload = header(32 + 4 + 8, 0x40, 2, 4);
  append(Payload, {'p', 'l', 'a', 'n', 1, 2, 3, 4, 5, 6, 7, 8});
  Bytes Two = Call;
  append(Two, Payload);
  S.push_back({"frames/call", Call});
  S.push_back({"frames/hangup", Bytes(Hangup.begin(), Hangup.end())});
  S.push_back({"frames/payload", Payload});
  S.push_back({"frames/two", Two});
  // Launch plans: payload size, then the plan.
  using Input = wire::ZeroCopyInput;
  using Output = wire::LaunchOutputSpec;
  Bytes One;
  put(One, uint64_t(16));
  append(One, encode<wire::SPSZeroCopyPlan>(
                  ExecutorAddr(0x1234), std::vector<Input>{{4, {4}, ExecutorAddr(0x10000), 16}},
                  std::vector<Output>{{1, 4}}, std::vector<wire::SourceOrdered>{}));
  Bytes TwoIn;
  put(TwoIn, uint64_t(24));
  append(TwoIn, encode<wire::SPSZeroCopyPlan>(
                    ExecutorAddr(0x1234),
                    std::vector<Input>{{8, {2}, ExecutorAddr(0x10000), 16},
                                       {1, {2, 4}, ExecutorAddr(0x10040), 8}},
                    std::vector<Output>{{0, 8}, {2, 4}}, std::vector<wire::SourceOrdered>{}));
  // A transposed [4][8] f64 view of a dense [8][4] array, in source order.
  Bytes Transposed;
  put(Transposed, uint64_t(256));
  append(Transposed,
         encode<wire::SPSZeroCopyPlan>(
             ExecutorAddr(0x1234), std::vector<Input>{{8, {4, 8}, ExecutorAddr(0x10000), 256}},
             std::vector<Output>{{2, 8}}, std::vector<wire::SourceOrdered>{{0, {1, 4}}}));
  // The first input a resident, the output kept.
  Bytes WithResidents;
  put(WithResidents, uint64_t(16));
  append(
      WithResidents,
      encode<wire::SPSResidentLaunchPlan>(
          ExecutorAddr(0x1234),
          std::vector<Input>{{8, {2, 2}, ExecutorAddr(), 0}, {4, {4}, ExecutorAddr(0x10000), 16}},
          std::vector<Output>{{2, 8}}, std::vector<wire::SourceOrdered>{},
          std::vector<wire::ResidentRef>{{0, 3}}, std::vector<wire::ResidentRef>{{0, 4}}));
  S.push_back({"launch-plan/residents", WithResidents});
  S.push_back({"launch-plan/one-input", One});
  S.push_back({"launch-plan/source-order", Transposed});
  S.push_back({"launch-plan/two-inputs", TwoIn});
  // Zero-copy results: outputs, payload size (32 bits), then the plan.
  using ZOut = wire::ZeroCopyOutput;
  auto Result = [](Bytes Outs, uint32_t Payload, std::string Err, std::vector<ZOut> Shapes) {
    put(Outs, Payload);
    append(Outs, encode<wire::SPSZeroCopyResult>(Err, Shapes, Ns, Ns, Ns, Ns, Ns));
    return Outs;
  };
  S.push_back({"zerocopy-result/one", Result(outputs({{1, 2}}), 16, "", {{{4}, 16}})});
  S.push_back({"zerocopy-result/error", Result(outputs({{1, 2}}), 0, "the kernel failed", {})});
  S.push_back(
      {"zerocopy-result/two", Result(outputs({{2, 0}, {0, 3}}), 14, "", {{{2, 3}, 6}, {{}, 8}})});
  // Shared-memory results: outputs, the window's base, then the plan.
  auto Shared = [&](Bytes Outs, uint64_t Base, std::vector<ZOut> Shapes,
                    std::vector<ExecutorAddr> Where) {
    uint64_t Total = 0;
    for (auto &[Sizes, N] : Shapes)
      Total += N;
    put(Outs, Base);
    append(Outs, encode<wire::SPSSharedResult>(
                     encode<wire::SPSZeroCopyResult>(std::string(), Shapes, Ns, Ns, Ns, Ns, Ns),
                     Total, Where));
    return Outs;
  };
  S.push_back({"shared-result/one",
               Shared(outputs({{1, 2}}), 0x10000, {{{4}, 16}}, {ExecutorAddr(0x10040)})});
  S.push_back(
      {"shared-result/two", Shared(outputs({{2, 0}, {0, 3}}), 0x10000, {{{2, 3}, 6}, {{}, 8}},
                                   {ExecutorAddr(0x10000), ExecutorAddr(0x1fff8)})});
  // Batched replies: outputs, the invoke reply's length and bytes, the read.
  using Invoked = sps::detail::SPSSerializableExpected<std::tuple<Bytes, uint64_t, uint64_t>>;
  using InvokeResult = wire::SpsSignature<wire::SPSBatchedInvokeSig>::Result;
  auto Batched = [](Bytes Outs, Invoked R, Bytes Read) {
    Bytes Reply = encode<InvokeResult>(R);
    put(Outs, uint16_t(Reply.size()));
    append(Outs, Reply);
    append(Outs, Read);
    return Outs;
  };
  S.push_back(
      {"batched-reply/dense",
       Batched(outputs({{1, 0}}), {true, {desc(0x7000, 0, {4}, {1}), Ns, Ns}, ""}, honestRead(4))});
  S.push_back({"batched-reply/transposed",
               Batched(outputs({{2, 1}}), {true, {desc(0x7000, 0, {2, 3}, {1, 2}), Ns, Ns}, ""},
                       honestRead(12))});
  S.push_back({"batched-reply/error",
               Batched(outputs({{1, 0}}), {false, {}, "output rank 99 is above 64"}, {})});
  // Naive replies: outputs, the descriptor area's length and bytes, reads.
  auto Naive = [](Bytes Outs, Bytes Rv, Bytes Read) {
    put(Outs, uint16_t(Rv.size()));
    append(Outs, Rv);
    append(Outs, Read);
    return Outs;
  };
  S.push_back(
      {"naive-reply/dense", Naive(outputs({{1, 2}}), desc(0x7000, 0, {3}, {1}), honestRead(12))});
  Bytes TwoRv = desc(0x8000, 0, {}, {});
  append(TwoRv, desc(0x7000, 3, {4}, {-1}));
  S.push_back({"naive-reply/scalar-and-reversed", Naive(outputs({{0, 3}, {1, 0}}), TwoRv, [] {
                 Bytes R = honestRead(8);
                 append(R, honestRead(4));
                 return R;
               }())});
  // Layouts: rank, element size index, offset, sizes, strides, then chunk
  // capacities.
  auto Layout = [](uint8_t Rank, uint8_t Elem, int64_t Offset, std::vector<int64_t> Sizes,
                   std::vector<int64_t> Strides) {
    Bytes B = {char(Rank), char(Elem)};
    put(B, Offset);
    for (int64_t V : Sizes)
      put(B, V);
    for (int64_t V : Strides)
      put(B, V);
    for (uint16_t C : {5, 64, 1000})
      put(B, C);
    return B;
  };
  S.push_back({"memref-layout/dense", Layout(1, 2, 0, {16}, {1})});
  S.push_back({"memref-layout/transposed", Layout(3, 3, 0, {2, 3, 4}, {1, 2, 6})});
  S.push_back({"memref-layout/broadcast", Layout(2, 0, 7, {3, 5}, {0, 1})});
  S.push_back({"memref-layout/wrapping", Layout(2, 0, 0, {2, 2}, {INT64_MAX, INT64_MIN})});
  // Residents: the decoder, the payload size, then the plan.
  auto Resident = [](uint8_t Which, uint64_t PayloadBytes, Bytes Plan) {
    Bytes B = {char(Which)};
    put(B, PayloadBytes);
    append(B, Plan);
    return B;
  };
  S.push_back({"residents/upload", Resident(0, 48, wire::encodeUploadPlan(3, 4, {3, 4}))});
  S.push_back({"residents/fetch", Resident(1, 0, wire::encodeResidentIds({3}))});
  S.push_back({"residents/release", Resident(2, 0, wire::encodeResidentIds({3, 9, 12}))});
  S.push_back({"residents/reply", Resident(3, 48, wire::encodeResidentReply("", {4, {3, 4}, 48}))});
  S.push_back({"residents/refusal",
               Resident(3, 0, wire::encodeResidentReply("resident 3 does not exist", {}))});
  // .npy files as NumPy writes them, of each header version.
  S.push_back({"npy-file/f64-c-v1",
               npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48)});
  S.push_back({"npy-file/i32-fortran-v2",
               npy(2, "{'descr': '<i4', 'fortran_order': True, 'shape': (3, 4), }", 48)});
  S.push_back({"npy-file/bool-scalar-v3",
               npy(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1)});
  S.push_back({"npy-file/c128-empty-v1",
               npy(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (0, 5), }", 0)});
  return S;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    errs() << "usage: catalyst-remote-fuzz-seeds DIR\n";
    return 2;
  }
  std::string Dir = Argv[1];
  for (auto &[Name, B] : seeds()) {
    std::string Path = Dir + "/" + Name;
    ::mkdir(Path.substr(0, Path.rfind('/')).c_str(), 0755);
    FILE *F = std::fopen(Path.c_str(), "wb");
    if (!F || std::fwrite(B.data(), 1, B.size(), F) != B.size() || std::fclose(F) != 0) {
      errs() << "catalyst-remote-fuzz-seeds: cannot write " << Path << "\n";
      return 1;
    }
  }
  return 0;
}
