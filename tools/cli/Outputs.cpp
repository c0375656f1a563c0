//===- Outputs.cpp - A launch's outputs, from --out to .npy files ---------===//

#include "Outputs.h"

#include "NpyHeader.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace llvm;

namespace catalyst::remote::cli {

Expected<OutputSpec> parseOutputSpec(StringRef Text) {
  auto [Name, RankText] = Text.rsplit(':');
  size_t Rank = 0;
  if (!Text.contains(':') || RankText.getAsInteger(10, Rank) || Rank > MaxNpyRank)
    return createStringError(inconvertibleErrorCode(),
                             "expected DTYPE:RANK (e.g. float64:2 or f64:2), the rank at most %zu",
                             MaxNpyRank);
  auto Type = dtypeNamed(Name);
  if (!Type)
    return Type.takeError();
  return OutputSpec{*Type, Rank};
}

Outputs::Outputs(ArrayRef<OutputSpec> Specs) : Specs(Specs.vec()) {
  for (const OutputSpec &S : Specs)
    Descs.emplace_back(S.Rank);
  for (size_t I = 0; I < Specs.size(); ++I)
    Args.push_back(Descs[I].arg(Specs[I].Type.Bytes));
  Into.resize(Specs.size());
}

Outputs::~Outputs() {
  for (MutableArrayRef<char> B : Into)
    std::free(B.data());
}

// A launch received each output into the buffer lent to it, or, when that
// was too small, into a fresh one (malloc'd, SessionOptions::Outputs),
// which replaces it.
void Outputs::adopt() {
  for (size_t I = 0; I < Specs.size(); ++I) {
    char *Now = Descs[I].allocated();
    // The engine allocated this product, checked for overflow, to receive
    // the output: it fits.
    uint64_t Bytes = Specs[I].Type.Bytes;
    for (int64_t D : Descs[I].sizes())
      Bytes *= uint64_t(D);
    if (Now != Into[I].data())
      std::free(Into[I].data());
    Into[I] = MutableArrayRef<char>(Now, Bytes);
  }
}

uint64_t Outputs::bytes() const {
  uint64_t Sum = 0;
  for (MutableArrayRef<char> B : Into)
    Sum += B.size();
  return Sum;
}

Expected<std::vector<OutputFile>> Outputs::write(StringRef Dir) const {
  std::vector<OutputFile> Files;
  for (size_t I = 0; I < Specs.size(); ++I) {
    SmallString<256> Path(Dir == "." ? "" : Dir);
    sys::path::append(Path, formatv("out{0}.npy", I).str());
    OutputFile F{Path.str().str(), Specs[I].Type, Descs[I].sizes(), Into[I].size()};
    if (auto Err = writeNpy(F.Path, F.Type, F.Shape, Into[I].data()))
      return Err;
    Files.push_back(std::move(F));
  }
  return Files;
}

} // namespace catalyst::remote::cli
