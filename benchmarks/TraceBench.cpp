//===- TraceBench.cpp - What writing a trace costs a launch ---------------===//
//
// A traced session writes each launch's spans to its trace file when the
// launch ends: a few microseconds of formatting and one write. Measured on
// the smallest launch, where it weighs most, against an untraced session of
// the same strategy on the same executor, interleaved (compareLaunches):
//
//   trace/launch/8B/STRATEGY   ratio_to_plain: traced over untraced, medians
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"

#include <filesystem>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// A private folder for the traces, removed at exit.
struct TraceFolder {
  std::string Dir;
  ~TraceFolder() {
    std::error_code EC;
    if (!Dir.empty())
      std::filesystem::remove_all(Dir, EC);
  }
};

Expected<std::string> tracePath(Strategy S) {
  static TraceFolder F;
  if (F.Dir.empty()) {
    std::string Pattern = (std::filesystem::temp_directory_path() / "crtraceXXXXXX").string();
    if (!::mkdtemp(Pattern.data()))
      return createStringError(inconvertibleErrorCode(), "cannot make a temporary folder");
    F.Dir = Pattern;
  }
  return F.Dir + "/" + strategyName(S) + ".json";
}

void runTraced(benchmark::State &State, BenchEnv &Env, Strategy S) {
  auto Path = tracePath(S);
  if (!Path)
    return fail(State, Path.takeError());
  SessionOptions O;
  O.Outputs = OutputAllocator{std::malloc, std::free};
  O.Strategy = S;
  O.Transport = TransportKind::Tcp; // as the untraced session compared
  O.TracePath = *Path;
  auto Traced = Session::open(Env.Address, O);
  if (!Traced)
    return fail(State, Traced.takeError());
  if (auto Err = (*Traced)->sendBinary(ForwardKernel, BinaryFormat::Object))
    return fail(State, std::move(Err));
  compareLaunches(State, *Env.Sessions.at(S), **Traced, "traced_us");
}

} // namespace

void registerTraceBenchmarks(BenchEnv &Env) {
  for (Strategy S : {Strategy::Batched, Strategy::ZeroCopy})
    benchmark::RegisterBenchmark((std::string("trace/launch/8B/") + strategyName(S)).c_str(),
                                 [&Env, S](benchmark::State &State) { runTraced(State, Env, S); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(1000);
}

} // namespace catalyst::remote::bench
