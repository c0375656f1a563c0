//===- CapiHarness.cpp - Driving the C ABI from tests ---------------------===//

#include "CapiHarness.h"

#include "catalyst/remote/RemoteBindings.h"

#include <mutex>
#include <sstream>

namespace catalyst::remote::test {

namespace {

std::mutex LogMutex;
std::vector<std::string> Log;
thread_local size_t ThreadCount = 0;
thread_local std::string ThreadLast;

// Returns, so the C ABI call returns its failure value instead of aborting.
void recordFailure(const char *Message) {
  ++ThreadCount;
  ThreadLast = Message ? Message : "(null message)";
  std::lock_guard<std::mutex> Lock(LogMutex);
  Log.push_back(ThreadLast);
}

// The first byte where A and B differ, for a readable failure.
std::string firstDifference(const std::vector<uint8_t> &A, const std::vector<uint8_t> &B) {
  size_t I = 0;
  while (I < A.size() && I < B.size() && A[I] == B[I])
    ++I;
  std::ostringstream S;
  S << "sizes " << A.size() << " and " << B.size() << " bytes, first difference at byte " << I;
  return S.str();
}

} // namespace

void FailureLog::install() {
  __catalyst__remote__set_failure_handler(&recordFailure);
  std::lock_guard<std::mutex> Lock(LogMutex);
  Log.clear();
}

size_t FailureLog::count() {
  return ThreadCount;
}

std::string FailureLog::last() {
  return ThreadLast;
}

std::vector<std::string> FailureLog::all() {
  std::lock_guard<std::mutex> Lock(LogMutex);
  return Log;
}

Outputs::Outputs(const std::vector<OutSpec> &Specs) {
  for (const OutSpec &S : Specs)
    Descs.emplace_back(S.Rank, S.ElemSize);
}

Outputs::~Outputs() {
  std::set<void *> Freed;
  for (const Desc &D : Descs) {
    void *P = D.allocated();
    if (!P || reinterpret_cast<uintptr_t>(P) == ConstantMarker || Kept.count(P))
      continue;
    if (Freed.insert(P).second)
      std::free(P);
  }
}

std::vector<void *> Outputs::descs() {
  std::vector<void *> V;
  for (Desc &D : Descs)
    V.push_back(D.data());
  return V;
}

std::vector<size_t> Outputs::ranks() const {
  std::vector<size_t> V;
  for (const Desc &D : Descs)
    V.push_back(D.rank());
  return V;
}

std::vector<size_t> Outputs::elemSizes() const {
  std::vector<size_t> V;
  for (const Desc &D : Descs)
    V.push_back(D.elemSize());
  return V;
}

InputArrays::InputArrays(const InputList &Inputs) {
  for (Desc *D : Inputs) {
    Descs.push_back(D->data());
    Ranks.push_back(D->rank());
    Sizes.push_back(D->elemSize());
  }
}

namespace {

// A launch's inputs and outputs as the C ABI takes them, for any of its
// launch calls: each takes the session, entry and object, then these.
struct LaunchArrays {
  InputArrays In;
  std::vector<void *> OutDescs;
  std::vector<size_t> OutRanks, OutSizes;
  LaunchArrays(const InputList &Inputs, Outputs &Out)
      : In(Inputs), OutDescs(Out.descs()), OutRanks(Out.ranks()), OutSizes(Out.elemSizes()) {}

  // Call(Session, Entry, Object, the arrays..., Extra...).
  template <typename CallFn, typename... ExtraTs>
  auto pass(CallFn Call, int64_t Session, const std::string &Entry, const std::string &Object,
            ExtraTs... Extra) {
    return Call(Session, Entry.c_str(), Object.c_str(), In.Descs.size(), In.Descs.data(),
                In.Ranks.data(), In.Sizes.data(), OutDescs.size(), OutDescs.data(), OutRanks.data(),
                OutSizes.data(), Extra...);
  }
};

} // namespace

bool launchRemote(int64_t Session, const std::string &Entry, const std::string &Object,
                  const InputList &Inputs, Outputs &Out, const std::vector<LentBuffer> &Into) {
  LaunchArrays A(Inputs, Out);
  size_t Before = FailureLog::count();
  if (Into.empty()) {
    A.pass(__catalyst__remote__launch, Session, Entry, Object);
  } else {
    std::vector<void *> Buffers;
    std::vector<size_t> Bytes;
    for (const LentBuffer &B : Into) {
      Buffers.push_back(B.Data);
      Bytes.push_back(B.Bytes);
    }
    A.pass(__catalyst__remote__launch_into, Session, Entry, Object, Buffers.data(), Bytes.data());
  }
  return FailureLog::count() == Before;
}

int32_t launchStatus(int64_t Session, const std::string &Entry, const std::string &Object,
                     const InputList &Inputs, Outputs &Out) {
  return LaunchArrays(Inputs, Out).pass(catalyst_remote_launch, Session, Entry, Object);
}

int64_t launchRemoteAsync(int64_t Session, const std::string &Entry, const std::string &Object,
                          const InputList &Inputs, Outputs &Out) {
  return LaunchArrays(Inputs, Out)
      .pass(__catalyst__remote__launch_async_memrefs, Session, Entry, Object);
}

void runLocal(PyfaceEntry Fn, const InputList &Inputs, Outputs &Out) {
  std::vector<void *> Av;
  for (Desc *D : Inputs) {
    Av.push_back(D->data());
    Out.keep(D->allocated());
  }
  size_t Slots = 0;
  for (size_t I = 0; I < Out.size(); ++I)
    Slots += 3 + 2 * Out[I].rank();
  std::vector<int64_t> Rv(Slots, 0);
  Fn(Rv.data(), Av.data());
  const int64_t *Cursor = Rv.data();
  for (size_t I = 0; I < Out.size(); ++I) {
    std::memcpy(Out[I].data(), Cursor, Out[I].byteSize());
    Cursor += 3 + 2 * Out[I].rank();
  }
}

::testing::AssertionResult sameOutputs(const Outputs &Remote, const Outputs &Local) {
  for (size_t I = 0; I < Remote.size(); ++I) {
    auto Dense = Remote[I].isDenseRowMajor();
    if (!Dense)
      return ::testing::AssertionFailure() << "output " << I << ": " << Dense.message();
    if (Remote[I].sizes() != Local[I].sizes())
      return ::testing::AssertionFailure()
             << "output " << I << ": remote sizes " << describe(Remote[I].sizes()) << ", local "
             << describe(Local[I].sizes());
    auto R = Remote[I].values(), L = Local[I].values();
    if (R != L)
      return ::testing::AssertionFailure()
             << "output " << I << ": values differ, " << firstDifference(R, L);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult checkLaunch(int64_t Session, const std::string &File,
                                       const std::string &Name, const InputList &Inputs,
                                       const std::vector<OutSpec> &Specs) {
  PyfaceEntry Local = hostEntry(File, Name);
  if (!Local)
    return ::testing::AssertionFailure() << "no local copy of " << File << ":" << Name;
  Outputs Remote(Specs), Expected(Specs);
  for (size_t I = 0; I < Remote.size(); ++I)
    Remote[I].poison();
  if (!launchRemote(Session, remoteEntry(Name), File + ".o", Inputs, Remote))
    return ::testing::AssertionFailure()
           << "launch of " << Name << " failed: " << FailureLog::last();
  runLocal(Local, Inputs, Expected);
  return sameOutputs(Remote, Expected);
}

void ScopedSession::reset(int64_t New) {
  if (H > 0)
    __catalyst__remote__close(H);
  H = New;
}

const char *modeName(Mode M) {
  switch (M) {
  case Mode::ZeroCopy:
    return "ZeroCopy";
  case Mode::Batched:
    return "Batched";
  case Mode::Naive:
    return "Naive";
  case Mode::UpstreamOnly:
    return "UpstreamOnly";
  case Mode::ZeroCopyShm:
    return "ZeroCopyShm";
  case Mode::BatchedShm:
    return "BatchedShm";
  case Mode::NaiveShm:
    return "NaiveShm";
  }
  return "?";
}

Mode overTcp(Mode M) {
  switch (M) {
  case Mode::ZeroCopyShm:
    return Mode::ZeroCopy;
  case Mode::BatchedShm:
    return Mode::Batched;
  case Mode::NaiveShm:
    return Mode::Naive;
  default:
    return M;
  }
}

bool overShm(Mode M) {
  return overTcp(M) != M;
}

const char *expectedStrategy(Mode M) {
  switch (overTcp(M)) {
  case Mode::ZeroCopy:
    return "zerocopy";
  case Mode::Batched:
    return "batched";
  default:
    return "naive";
  }
}

const char *expectedTransport(Mode M) {
  return overShm(M) ? "local" : "tcp";
}

void PrintTo(Mode M, std::ostream *OS) {
  *OS << modeName(M);
}

std::string modeTestName(const ::testing::TestParamInfo<Mode> &Info) {
  return modeName(Info.param);
}

std::string strategyOf(int64_t Session) {
  catalyst_remote_stats Stats{};
  if (__catalyst__remote__stats(Session, &Stats) != 0 || !Stats.strategy)
    return "";
  return Stats.strategy;
}

std::string transportOf(int64_t Session) {
  catalyst_remote_stats Stats{};
  if (__catalyst__remote__stats(Session, &Stats) != 0 || !Stats.transport)
    return "";
  return Stats.transport;
}

catalyst_remote_stats statsOf(int64_t Session) {
  catalyst_remote_stats S{};
  EXPECT_EQ(__catalyst__remote__stats(Session, &S), 0) << FailureLog::last();
  return S;
}

ScopedEnv::ScopedEnv(const char *Name, const char *Value) : Name(Name) {
  const char *Current = std::getenv(Name);
  Had = Current != nullptr;
  Old = Current ? Current : "";
  if (Value)
    ::setenv(Name, Value, 1);
  else
    ::unsetenv(Name);
}

ScopedEnv::~ScopedEnv() {
  if (Had)
    ::setenv(Name.c_str(), Old.c_str(), 1);
  else
    ::unsetenv(Name.c_str());
}

void CapiTest::SetUp() {
  FailureLog::install();
}

void CapiTest::TearDown() {
  Session.reset();
  Exec.stop();
}

void CapiTest::startAndOpen(const ExecutorOptions &Options) {
  ASSERT_TRUE(Exec.start(Options));
  int64_t H = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << "open " << Exec.address() << ": " << FailureLog::last();
  Session.reset(H);
}

void CapiTest::startAndOpen(Mode M, ExecutorOptions Options) {
  Options.UpstreamOnly = M == Mode::UpstreamOnly;
  // UpstreamOnly asks for nothing: falling back is the executor's doing.
  const char *Ask = M == Mode::UpstreamOnly ? nullptr : expectedStrategy(M);
  ScopedEnv Strategy("CATALYST_REMOTE_STRATEGY", Ask);
  ScopedEnv Transport("CATALYST_REMOTE_TRANSPORT", expectedTransport(M));
  ASSERT_NO_FATAL_FAILURE(startAndOpen(Options));
  ASSERT_EQ(strategyOf(Session.get()), expectedStrategy(M)) << FailureLog::last();
  ASSERT_EQ(transportOf(Session.get()), expectedTransport(M));
}

void CapiTest::sendKernel(const std::string &File) {
  std::string Path = kernelObject(File);
  ASSERT_EQ(__catalyst__remote__send_binary(Session.get(), Path.c_str(), 0), 0)
      << "send_binary " << Path << ": " << FailureLog::last();
}

InputList inputsOf(const std::vector<Input *> &Ins) {
  InputList L;
  for (Input *In : Ins)
    L.push_back(&In->D);
  return L;
}

} // namespace catalyst::remote::test
