//===- Run.cpp - catalyst-remote run --------------------------------------===//

#include "Args.h"
#include "Commands.h"
#include "Descriptor.h"
#include "Outputs.h"
#include "Progress.h"
#include "Report.h"
#include "catalyst/remote/Session.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

using Clock = std::chrono::steady_clock;

constexpr StringRef PyfacePrefix = "_catalyst_pyface_";

struct RunOptions {
  std::vector<std::string> Inputs;
  std::vector<OutputSpec> Outputs;
  std::string OutDir = ".";
  unsigned Repeat = 1;
  bool Json = false;
  // Options that are the session's own (--strategy) set it directly.
  SessionOptions Session;
};

Command describe(RunOptions &O) {
  auto AddOutput = [&O](StringRef V) -> Error {
    auto Spec = parseOutputSpec(V);
    if (!Spec)
      return Spec.takeError();
    O.Outputs.push_back(*Spec);
    return Error::success();
  };
  auto SetStrategy = [&O](StringRef V) -> Error {
    auto S = parseStrategy(V);
    if (!S)
      return S.takeError();
    O.Session.Strategy = *S;
    return Error::success();
  };
  return {"run",
          "ADDR OBJECT ENTRY [--in FILE.npy ...] [--out DTYPE:RANK ...] [options]",
          "Links OBJECT (a relocatable object, as Catalyst compiles one) into the executor at\n"
          "ADDR, launches ENTRY (_catalyst_pyface_NAME, or NAME alone) on the --in arrays, in\n"
          "order, and writes its outputs as out0.npy, out1.npy, ... Inputs are NumPy .npy\n"
          "files (versions 1 to 3, little-endian, C or Fortran order, passed as they lie) of\n"
          "bool, int8 to int64, uint8 to uint64, float16/32/64 or complex64/128. Each --out\n"
          "declares an output's dtype (NumPy's name or short: f64, i32, u8, c128, bool; bits,\n"
          "so i8 is int8) and rank; its shape comes back with it. A launch that moves more\n"
          "than 64 MiB and takes over a second shows its progress when stderr is a terminal.\n"
          "The secret comes from CATALYST_REMOTE_TOKEN_FILE or CATALYST_REMOTE_TOKEN.",
          {"ADDR", "OBJECT", "ENTRY"},
          {{"--in", "FILE.npy", "an input, in the entry's argument order (repeat for each)",
            addText(O.Inputs)},
           {"--out", "DTYPE:RANK", "an output, in order (repeat for each)", AddOutput},
           {"--out-dir", "DIR", "where the outputs go (default: here; made if missing)",
            setText(O.OutDir)},
           {"--strategy", "S",
            "naive, batched, zerocopy or auto (default:\nCATALYST_REMOTE_STRATEGY, else auto)",
            SetStrategy},
           {"--repeat", "N",
            "launch N times; print the median, min and max\nlaunch time and GB/s of inputs and "
            "outputs;\nthe last launch's outputs are written",
            setCount(O.Repeat, 1000000)},
           {"--trace", "FILE.json",
            "write the launches' trace (Chrome trace-event JSON,\nfor Perfetto; default: "
            "CATALYST_REMOTE_TRACE)",
            setText(O.Session.TracePath)},
           {"--json", nullptr, "print one JSON object instead of text", setFlag(O.Json)}}};
}

Expected<std::vector<NpyArray>> loadInputs(ArrayRef<std::string> Paths, uint64_t &Bytes) {
  std::vector<NpyArray> Arrays;
  Bytes = 0;
  for (const std::string &P : Paths) {
    auto A = readNpy(P);
    if (!A)
      return A.takeError();
    Bytes += A->Data.size();
    Arrays.push_back(std::move(*A));
  }
  return Arrays;
}

Error makeDirectory(StringRef Dir) {
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "cannot make the output folder '%s': %s", Dir.str().c_str(),
                             EC.message().c_str());
  return Error::success();
}

std::string entrySymbol(StringRef Entry) {
  return Entry.starts_with(PyfacePrefix) ? Entry.str() : (PyfacePrefix + Entry).str();
}

// Launches Repeat times, timing each; Outs holds the last launch's outputs.
Expected<std::vector<std::chrono::nanoseconds>>
launchAll(Session &S, const LaunchCall &Base, Outputs &Outs, unsigned Repeat, uint64_t InputBytes) {
  std::vector<std::chrono::nanoseconds> Times;
  for (unsigned I = 0; I < Repeat; ++I) {
    LaunchCall Call = Base;
    Call.Outputs = Outs.args();
    Call.Into = Outs.into();
    LaunchProgress Progress(S, InputBytes, Outs.bytes());
    auto Began = Clock::now();
    if (auto Err = S.launch(Call))
      return Err;
    Times.push_back(Clock::now() - Began);
    Outs.adopt();
  }
  return Times;
}

} // namespace

Error run(ArrayRef<StringRef> Args) {
  RunOptions O;
  auto Operands = beginCommand(describe(O), Args, O.Session);
  if (!Operands || !*Operands)
    return Operands.takeError(); // success when it printed the help
  // Outputs are the tool's to free, with the C library's free.
  O.Session.Outputs = {&std::malloc, &std::free};
  const std::string &Address = (**Operands)[0], &Object = (**Operands)[1];
  std::string Entry = entrySymbol((**Operands)[2]);

  // Everything local is checked before the executor is reached.
  uint64_t InputBytes = 0;
  auto Inputs = loadInputs(O.Inputs, InputBytes);
  if (!Inputs)
    return Inputs.takeError();
  if (auto Err = makeDirectory(O.OutDir))
    return Err;
  std::vector<Descriptor> InDescs;
  std::vector<MemrefArg> InArgs;
  for (const NpyArray &A : *Inputs)
    InDescs.push_back(Descriptor::of(A));
  for (size_t I = 0; I < InDescs.size(); ++I)
    InArgs.push_back(InDescs[I].arg((*Inputs)[I].Type.Bytes));
  Outputs Outs(O.Outputs);

  auto S = Session::open(Address, O.Session);
  if (!S)
    return S.takeError();
  if (auto Err = (*S)->sendBinary(Object, BinaryFormat::Object))
    return Err;
  LaunchCall Base{Entry, Object, InArgs, {}};
  auto Times = launchAll(**S, Base, Outs, O.Repeat, InputBytes);
  if (!Times)
    return Times.takeError();

  RunReport R;
  auto Files = Outs.write(O.OutDir);
  if (!Files)
    return Files.takeError();
  R.Outputs = std::move(*Files);
  R.Chosen = (*S)->strategy();
  R.Launch = summarize(std::move(*Times));
  R.PayloadBytes = InputBytes + Outs.bytes();
  R.Last = (*S)->stats().Last;
  if (auto Err = (*S)->close())
    return Err;
  printRun(R, O.Json, outs());
  return Error::success();
}

} // namespace catalyst::remote::cli
