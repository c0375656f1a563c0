//===- ResidentSessionTest.cpp - Session::upload, launches, release -------===//
//
// Resident tensors through the C++ session API (catalyst/remote/Resident.h)
// against real executors and kernels: an upload's values cross once, and
// launches that name it read it in the executor, mixed with host inputs;
// every result is checked against the same kernel run here on the values
// uploaded. Outputs kept in the executor feed the next launch and come
// back only when fetched; a failed launch keeps nothing. What the session
// refuses (handles of another session, released
// or empty ones, a rank or element size the kernel does not expect, a
// strategy without residents, the executor's cap) fails naming the
// argument, and the session goes on. Stats and the trace show each
// resident call and the bytes residents kept off the link. Residents
// work over TLS as over plain TCP.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "TempDir.h"
#include "Text.h"
#include "TokenFile.h"
#include "TraceReader.h"
#include "catalyst/remote/SecretBytes.h"
#include "catalyst/remote/Session.h"

#include <gtest/gtest.h>
#include <random>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

class ResidentSessionTest : public ::testing::Test {
protected:
  void start(std::vector<std::string> Args = {}) {
    ExecutorOptions EO;
    EO.Args = std::move(Args);
    ASSERT_TRUE(Exec.start(EO));
    S = openWithConcat(Exec.address(), Strategy::ZeroCopy);
    ASSERT_TRUE(S);
    ASSERT_FALSE(bool(S->sendBinary(kernelObject("copy"), BinaryFormat::Object)));
  }

  Resident upload(Input &In) {
    auto R = S->upload({In.D.data(), In.D.rank(), In.D.elemSize()});
    if (!R) {
      ADD_FAILURE() << "upload: " << llvm::toString(R.takeError());
      return {};
    }
    return std::move(*R);
  }

  // concat_2 on resident R (uploaded from Uploaded) and host input Host,
  // checked against the local kernel on both sets of values; Sent gets
  // the bytes the launch sent.
  ::testing::AssertionResult concatMatches(const Resident &R, Input &Uploaded, Input &Host,
                                           uint64_t &Sent) {
    MemrefArg Args[] = {MemrefArg::of(R), {Host.D.data(), 1, 1}};
    Desc Remote(1, 1), Local(1, 1);
    MemrefArg Out{Remote.data(), 1, 1};
    if (auto Err = S->launch({remoteEntry("concat_2"), "concat.o", Args, {Out}}))
      return ::testing::AssertionFailure() << llvm::toString(std::move(Err));
    Sent = S->stats().Last.BytesSent;
    void *Av[] = {Uploaded.D.data(), Host.D.data()};
    hostEntry("concat", "concat_2")(Local.data(), Av);
    bool Same = Remote.values() == Local.values();
    std::free(Remote.allocated());
    std::free(Local.allocated());
    if (!Same)
      return ::testing::AssertionFailure() << "output differs from the local kernel's";
    return ::testing::AssertionSuccess();
  }

  // What copy.o's layout_r2 was handed for R: offset, sizes, strides.
  std::vector<int64_t> viewOf(const Resident &R) {
    Desc Out(1, 8);
    MemrefArg Args[] = {MemrefArg::of(R)};
    MemrefArg OutArg{Out.data(), 1, 8};
    if (auto Err = S->launch({remoteEntry("layout_r2"), "copy.o", Args, {OutArg}})) {
      ADD_FAILURE() << llvm::toString(std::move(Err));
      return {};
    }
    auto View = as<int64_t>(Out.values());
    std::free(Out.allocated());
    return View;
  }

  // R's values, as copy_r<rank>_e<size> returns them.
  std::vector<uint8_t> valuesOf(const Resident &R) {
    Desc Out(R.rank(), R.elemSize());
    MemrefArg Args[] = {MemrefArg::of(R)};
    MemrefArg OutArg{Out.data(), R.rank(), R.elemSize()};
    std::string Entry = remoteEntry(rankSizeEntry("copy", R.rank(), R.elemSize()));
    if (auto Err = S->launch({Entry, "copy.o", Args, {OutArg}})) {
      ADD_FAILURE() << llvm::toString(std::move(Err));
      return {};
    }
    auto Values = Out.values();
    std::free(Out.allocated());
    return Values;
  }

  ExecutorProcess Exec;
  std::unique_ptr<Session> S;
  std::mt19937_64 Rng{31};
};

TEST_F(ResidentSessionTest, AnUploadCrossesOnceAndLaunchesReadItMixedWithHostInputs) {
  start();
  auto Big = makeInput(Layout::Dense, {256 << 10}, 1, Rng);
  Resident R = upload(*Big);
  ASSERT_TRUE(R);
  EXPECT_EQ(R.rank(), 1u);
  EXPECT_EQ(R.elemSize(), 1u);
  EXPECT_EQ(R.shape().vec(), std::vector<int64_t>{256 << 10});
  EXPECT_EQ(R.bytes(), uint64_t(256 << 10));
  for (int Launch = 0; Launch < 3; ++Launch) {
    auto Small = makeInput(Layout::Dense, {100 + Launch}, 1, Rng);
    uint64_t Sent = 0;
    EXPECT_TRUE(concatMatches(R, *Big, *Small, Sent)) << "launch " << Launch;
    EXPECT_LT(Sent, uint64_t(64 << 10)) << "the resident's values do not cross again";
  }
  EXPECT_FALSE(bool(S->release(R)));
  EXPECT_FALSE(R) << "release empties the handle";
}

TEST_F(ResidentSessionTest, AnUploadOfAnyLayoutIsKeptDenseInRowMajorOrder) {
  start();
  for (Layout L : {Layout::Dense, Layout::Offset, Layout::Strided, Layout::Transposed,
                   Layout::Reversed, Layout::Broadcast, Layout::ZeroSize}) {
    SCOPED_TRACE(layoutName(L));
    auto In = makeInput(L, {6, 7}, 4, Rng);
    Resident R = upload(*In);
    ASSERT_TRUE(R);
    EXPECT_EQ(R.shape().vec(), In->D.sizes());
    EXPECT_EQ(valuesOf(R), In->D.values()) << "the values, in row-major order";
    std::vector<int64_t> Dense = {0, In->D.size(0), In->D.size(1)};
    for (int64_t Stride : denseStrides(In->D.sizes()))
      Dense.push_back(Stride);
    EXPECT_EQ(viewOf(R), Dense) << "the kernel's view: dense, row-major, offset 0";
    EXPECT_FALSE(bool(S->release(R)));
  }
}

TEST_F(ResidentSessionTest, BadHandlesAreRefusedNamingTheArgumentAndTheSessionGoesOn) {
  start();
  auto In = makeInput(Layout::Dense, {64}, 1, Rng);
  Resident R = upload(*In);
  ASSERT_TRUE(R);
  Resident Copy = R;
  auto Host = makeInput(Layout::Dense, {8}, 1, Rng);
  Desc Out(1, 1);
  MemrefArg OutArg{Out.data(), 1, 1};
  auto launchWith = [&](MemrefArg First) {
    MemrefArg Args[] = {First, {Host->D.data(), 1, 1}};
    return failureOf(S->launch({remoteEntry("concat_2"), "concat.o", Args, {OutArg}}));
  };

  MemrefArg WrongRank = MemrefArg::of(R);
  WrongRank.Rank = 2;
  auto F = launchWith(WrongRank);
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "input 0: resident " + std::to_string(R.id()) +
                                      " has rank 1, element size 1; the launch expects rank 2, "
                                      "element size 1"))
      << F.Message;
  MemrefArg WrongSize = MemrefArg::of(R);
  WrongSize.ElemSize = 8;
  EXPECT_TRUE(mentions(launchWith(WrongSize).Message, "the launch expects rank 1, element size 8"));
  Resident Empty;
  F = launchWith(MemrefArg::of(Empty));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "input 0 is an empty handle")) << F.Message;

  // Another session's handle, though its id is one this session uses too.
  auto Other = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(Other);
  auto Theirs = Other->upload({In->D.data(), 1, 1});
  ASSERT_TRUE(bool(Theirs)) << llvm::toString(Theirs.takeError());
  EXPECT_EQ(Theirs->id(), R.id()) << "ids are per session";
  F = launchWith(MemrefArg::of(*Theirs));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "belongs to another session")) << F.Message;
  F = failureOf(S->release(*Theirs));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(*Theirs) << "a refused release leaves the handle as it was";

  ASSERT_FALSE(bool(S->release(R)));
  F = launchWith(MemrefArg::of(Copy));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(
      mentions(F.Message, "input 0, resident " + std::to_string(Copy.id()) + ", was released"))
      << F.Message;
  F = failureOf(S->release(Copy));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument) << "a second release";
  EXPECT_TRUE(mentions(F.Message, "was released")) << F.Message;
  F = failureOf(S->release(R));
  EXPECT_TRUE(mentions(F.Message, "the resident to release is an empty handle")) << F.Message;
  F = failureOf(S->upload(MemrefArg::of(*Theirs)).takeError());
  EXPECT_TRUE(mentions(F.Message, "the tensor is a resident already")) << F.Message;
  F = failureOf(S->upload({nullptr, 1, 1}).takeError());
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "upload failed: tensor 0: null descriptor")) << F.Message;

  // Both sessions go on: theirs still holds its resident, this one
  // uploads again.
  EXPECT_FALSE(bool(Other->release(*Theirs)));
  Resident Again = upload(*In);
  uint64_t Sent = 0;
  EXPECT_TRUE(concatMatches(Again, *In, *Host, Sent));
}

TEST_F(ResidentSessionTest, TheExecutorsCapIsNamedAndTheSessionGoesOn) {
  start({"--max-resident-mib", "1"});
  auto Big = makeInput(Layout::Dense, {(1 << 20) + 1}, 1, Rng);
  auto F = failureOf(S->upload({Big->D.data(), 1, 1}).takeError());
  EXPECT_TRUE(mentions(F.Message, "--max-resident-mib")) << F.Message;
  auto Small = makeInput(Layout::Dense, {1000}, 1, Rng);
  Resident R = upload(*Small);
  auto Host = makeInput(Layout::Dense, {3}, 1, Rng);
  uint64_t Sent = 0;
  EXPECT_TRUE(concatMatches(R, *Small, *Host, Sent));
}

TEST_F(ResidentSessionTest, OtherStrategiesSayResidentsNeedZeroCopy) {
  ASSERT_TRUE(Exec.start());
  for (Strategy St : {Strategy::Batched, Strategy::Naive}) {
    auto Sess = openWithConcat(Exec.address(), St);
    ASSERT_TRUE(Sess);
    auto In = makeInput(Layout::Dense, {16}, 1, Rng);
    auto F = failureOf(Sess->upload({In->D.data(), 1, 1}).takeError());
    EXPECT_EQ(F.Kind, FailureKind::BadArgument);
    EXPECT_TRUE(mentions(F.Message, std::string("resident tensors need the zerocopy strategy; this "
                                                "session's is ") +
                                        strategyName(St)))
        << F.Message;
  }
}

TEST_F(ResidentSessionTest, AClosedSessionRefusesItsHandles) {
  start();
  auto In = makeInput(Layout::Dense, {16}, 1, Rng);
  Resident R = upload(*In);
  ASSERT_FALSE(bool(S->close()));
  auto F = failureOf(S->release(R));
  EXPECT_EQ(F.Kind, FailureKind::Closed) << F.Message;
  F = failureOf(S->upload({In->D.data(), 1, 1}).takeError());
  EXPECT_EQ(F.Kind, FailureKind::Closed) << F.Message;
}

TEST_F(ResidentSessionTest, KeptOutputsChainInTheExecutorAndComeBackWhenFetched) {
  start();
  auto X = makeInput(Layout::Dense, {200000}, 1, Rng);
  Resident Up = upload(*X);
  ASSERT_TRUE(Up);

  // copy_r1_e1(X) stays: only its shape comes back.
  Resident A;
  Resident *KeepA[] = {&A};
  Desc ADesc(1, 1);
  ADesc.poison();
  MemrefArg CopyIn[] = {MemrefArg::of(Up)};
  MemrefArg AOut{ADesc.data(), 1, 1};
  ASSERT_FALSE(bool(S->launch({remoteEntry("copy_r1_e1"), "copy.o", CopyIn, {AOut}, {}, KeepA})));
  EXPECT_LT(S->stats().Last.BytesReceived, uint64_t(64 << 10)) << "the kept output stays";
  ASSERT_TRUE(A);
  EXPECT_EQ(A.shape().vec(), std::vector<int64_t>{200000});
  EXPECT_EQ(A.bytes(), 200000u);
  EXPECT_EQ(ADesc.allocated(), nullptr);
  EXPECT_EQ(ADesc.aligned(), nullptr);
  EXPECT_EQ(ADesc.sizes(), std::vector<int64_t>{200000});
  EXPECT_EQ(ADesc.strides(), std::vector<int64_t>{1});
  EXPECT_EQ(ADesc.offset(), 0);

  // concat_2(A, H) stays too; the chain crossed the link once, as X.
  auto H = makeInput(Layout::Dense, {77}, 1, Rng);
  Resident B;
  Resident *KeepB[] = {&B};
  Desc BDesc(1, 1);
  MemrefArg ConcatIn[] = {MemrefArg::of(A), {H->D.data(), 1, 1}};
  MemrefArg BOut{BDesc.data(), 1, 1};
  ASSERT_FALSE(bool(S->launch({remoteEntry("concat_2"), "concat.o", ConcatIn, {BOut}, {}, KeepB})));
  EXPECT_LT(S->stats().Last.BytesSent + S->stats().Last.BytesReceived, uint64_t(64 << 10));
  ASSERT_TRUE(B);

  Desc Local(1, 1);
  void *Av[] = {X->D.data(), H->D.data()};
  hostEntry("concat", "concat_2")(Local.data(), Av);
  auto Expected = Local.values();
  std::free(Local.allocated());

  // Fetched into a fresh buffer, into one lent, and past one too small.
  Desc Fresh(1, 1);
  ASSERT_FALSE(bool(S->fetch(B, {Fresh.data(), 1, 1})));
  EXPECT_TRUE(Fresh.isDenseRowMajor());
  EXPECT_EQ(Fresh.values(), Expected);
  std::free(Fresh.allocated());
  std::vector<char> Mine(B.bytes()), Small(B.bytes() - 1);
  Desc Lent(1, 1);
  ASSERT_FALSE(bool(S->fetch(B, {Lent.data(), 1, 1}, Mine)));
  EXPECT_EQ(Lent.allocated(), Mine.data()) << "a buffer large enough receives it";
  EXPECT_EQ(Lent.values(), Expected);
  Desc Past(1, 1);
  ASSERT_FALSE(bool(S->fetch(B, {Past.data(), 1, 1}, Small)));
  EXPECT_NE(Past.allocated(), Small.data()) << "one too small does not";
  EXPECT_EQ(Past.values(), Expected);
  std::free(Past.allocated());

  // A fetch into a memref the resident is not.
  Desc Wrong(2, 1);
  Wrong.poison();
  auto F = failureOf(S->fetch(B, {Wrong.data(), 2, 1}));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "the output has rank 2, element size 1; the resident has rank "
                                  "1, element size 1"))
      << F.Message;
  EXPECT_TRUE(Wrong.allZero()) << "a failed fetch zeroes the descriptor";
  for (Resident *R : {&Up, &A, &B})
    EXPECT_FALSE(bool(S->release(*R)));
}

// Over TLS (an executor with a token, reached over TCP) residents work as
// over plain TCP: an upload read by a launch, a kept output, its fetch.
TEST_F(ResidentSessionTest, UploadsKeepsAndFetchesOverTls) {
  TokenFile Token;
  ExecutorOptions EO;
  EO.Args = {"--token-file", Token.path()};
  ASSERT_TRUE(Exec.start(EO));
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  O.Transport = TransportKind::Tcp;
  S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  ASSERT_FALSE(bool(S->sendBinary(kernelObject("copy"), BinaryFormat::Object)));
  // Socket files (the .unix run) stay plain.
  if (!llvm::StringRef(Exec.address()).starts_with("unix:")) {
    EXPECT_TRUE(mentions(S->protection(), "TLS")) << S->protection();
  }
  auto Big = makeInput(Layout::Dense, {300000}, 1, Rng);
  Resident R = upload(*Big);
  ASSERT_TRUE(R);
  auto Small = makeInput(Layout::Dense, {50}, 1, Rng);
  uint64_t Sent = 0;
  EXPECT_TRUE(concatMatches(R, *Big, *Small, Sent));
  EXPECT_LT(Sent, uint64_t(64 << 10)) << "the resident's values do not cross again";
  Resident K;
  Resident *Keep[] = {&K};
  Desc KDesc(1, 1);
  MemrefArg In[] = {MemrefArg::of(R)};
  MemrefArg KOut{KDesc.data(), 1, 1};
  ASSERT_FALSE(bool(S->launch({remoteEntry("copy_r1_e1"), "copy.o", In, {KOut}, {}, Keep})));
  Desc Back(1, 1);
  ASSERT_FALSE(bool(S->fetch(K, {Back.data(), 1, 1})));
  EXPECT_EQ(Back.values(), Big->D.values());
  std::free(Back.allocated());
  for (Resident *Each : {&R, &K})
    EXPECT_FALSE(bool(S->release(*Each)));
}

TEST_F(ResidentSessionTest, AFailedLaunchKeepsNothingAndFreesWhatTheExecutorKept) {
  // The executor keeps at most 1 MiB; this host takes at most 1000 bytes
  // of outputs, so the launch below fails here after the executor kept
  // its first output (600 kB).
  ExecutorOptions EO;
  EO.Args = {"--max-resident-mib", "1"};
  ASSERT_TRUE(Exec.start(EO));
  SessionOptions O;
  O.Strategy = Strategy::ZeroCopy;
  O.MaxOutputBytes = 1000;
  S = openSession(Exec.address(), O);
  ASSERT_TRUE(S);
  ASSERT_FALSE(bool(S->sendBinary(kernelObject("alias"), BinaryFormat::Object)));
  std::vector<int32_t> Values(300000, 5);
  auto In = makeDenseInput({300000}, Values);
  Resident Tail;
  Resident *Keep[] = {&Tail, nullptr};
  Desc TailDesc(1, 4), HeadDesc(1, 4);
  MemrefArg Args[] = {{In->D.data(), 1, 4}};
  MemrefArg Outs[] = {{TailDesc.data(), 1, 4}, {HeadDesc.data(), 1, 4}};
  auto F = failureOf(S->launch({remoteEntry("alias_split"), "alias.o", Args, Outs, {}, Keep}));
  EXPECT_TRUE(mentions(F.Message, "SessionOptions::MaxOutputBytes")) << F.Message;
  EXPECT_FALSE(Tail) << "a failed launch hands out no handle";
  EXPECT_TRUE(TailDesc.allZero());
  Desc Out(1, 4);
  F = failureOf(S->fetch(Tail, {Out.data(), 1, 4}));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "the resident to fetch is an empty handle")) << F.Message;
  // Freed: 900 kB fit under the cap again.
  auto Big = makeInput(Layout::Dense, {900000}, 1, Rng);
  auto Up = S->upload({Big->D.data(), 1, 1});
  EXPECT_TRUE(bool(Up)) << llvm::toString(Up.takeError());
}

TEST_F(ResidentSessionTest, KeepingNeedsAHandlePerOutputEachOnce) {
  start();
  auto In = makeInput(Layout::Dense, {16}, 1, Rng);
  Resident A;
  Desc O1(1, 1), O2(1, 1);
  MemrefArg Args[] = {{In->D.data(), 1, 1}};
  MemrefArg Outs[] = {{O1.data(), 1, 1}};
  Resident *TooMany[] = {&A, nullptr};
  auto F = failureOf(S->launch({remoteEntry("copy_r1_e1"), "copy.o", Args, Outs, {}, TooMany}));
  EXPECT_EQ(F.Kind, FailureKind::BadArgument);
  EXPECT_TRUE(mentions(F.Message, "2 handles to keep outputs in, for 1 outputs")) << F.Message;
  Resident *Fine[] = {&A};
  ASSERT_FALSE(bool(S->launch({remoteEntry("copy_r1_e1"), "copy.o", Args, Outs, {}, Fine})));
  EXPECT_EQ(valuesOf(A), In->D.values());
}

TEST_F(ResidentSessionTest, AsyncLaunchesTakeResidentsAndKeepOutputs) {
  start();
  auto In = makeInput(Layout::Dense, {5000}, 1, Rng);
  Resident Up = upload(*In);
  Resident A;
  Resident *Keep[] = {&A};
  Desc Out(1, 1);
  MemrefArg Args[] = {MemrefArg::of(Up)};
  MemrefArg Outs[] = {{Out.data(), 1, 1}};
  uint64_t Ticket = S->launchAsync({remoteEntry("copy_r1_e1"), "copy.o", Args, Outs, {}, Keep});
  ASSERT_FALSE(bool(S->await(Ticket)));
  ASSERT_TRUE(A) << "the handle is written by the time await returns";
  EXPECT_EQ(valuesOf(A), In->D.values());
}

TEST_F(ResidentSessionTest, StatsAndTheTraceShowWhatResidentsMovedAndSpared) {
  start();
  TempDir Dir;
  std::string Path = Dir.path("residents.json");
  ASSERT_FALSE(bool(S->startTrace(Path)));
  auto X = makeInput(Layout::Dense, {100000}, 1, Rng);
  Resident Up = upload(*X);
  ASSERT_TRUE(Up);
  auto H = makeInput(Layout::Dense, {20}, 1, Rng);
  Resident Kept;
  Resident *Keep[] = {&Kept};
  Desc Out(1, 1);
  MemrefArg Args[] = {MemrefArg::of(Up), {H->D.data(), 1, 1}};
  MemrefArg Outs[] = {{Out.data(), 1, 1}};
  ASSERT_FALSE(bool(S->launch({remoteEntry("concat_2"), "concat.o", Args, Outs, {}, Keep})));
  EXPECT_EQ(S->stats().Last.ResidentBytes, 100000u + 100020u)
      << "the resident input's bytes and the kept output's";
  ResidentStats Mid = S->stats().Residents;
  EXPECT_EQ(Mid.Held, 2u);
  EXPECT_EQ(Mid.HeldBytes, 200020u);
  Desc Back(1, 1);
  ASSERT_FALSE(bool(S->fetch(Kept, {Back.data(), 1, 1})));
  std::free(Back.allocated());
  Resident Empty;
  EXPECT_TRUE(bool(S->release(Empty))) << "a refused release counts as none";
  ASSERT_FALSE(bool(S->release(Up)));
  ResidentStats R = S->stats().Residents;
  EXPECT_EQ(R.Uploads, 1u);
  EXPECT_EQ(R.UploadedBytes, 100000u);
  EXPECT_EQ(R.KeptOutputs, 1u);
  EXPECT_EQ(R.Fetches, 1u);
  EXPECT_EQ(R.FetchedBytes, 100020u);
  EXPECT_EQ(R.Releases, 1u);
  EXPECT_EQ(R.Held, 1u);
  EXPECT_EQ(R.HeldBytes, 100020u);
  ASSERT_FALSE(bool(S->stopTrace()));

  auto T = readTrace(Path);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  ASSERT_EQ(T->named("upload resident").size(), 1u);
  const TraceSpan *U = T->named("upload resident")[0];
  EXPECT_EQ(U->Category, "resident");
  EXPECT_EQ(U->intArg("bytes"), 100000);
  EXPECT_GE(U->intArg("bytes_sent"), 100000);
  // The host's launch span (the executor's has its phases alone).
  const TraceSpan *L = nullptr;
  for (const TraceSpan *Span : T->named("launch "))
    if (Span->intArg("inputs") == 2)
      L = Span;
  ASSERT_NE(L, nullptr);
  EXPECT_EQ(L->intArg("resident_inputs"), 1);
  EXPECT_EQ(L->intArg("kept_outputs"), 1);
  EXPECT_EQ(L->intArg("resident_bytes"), 200020);
  ASSERT_EQ(T->named("fetch resident " + std::to_string(Kept.id())).size(), 1u);
  EXPECT_GE(T->named("fetch resident")[0]->intArg("bytes_received"), 100020);
  EXPECT_EQ(T->named("release resident").size(), 2u) << "the refused one too";
  EXPECT_EQ(T->named("release resident")[0]->textArg("error").empty(), false);
}

} // namespace
