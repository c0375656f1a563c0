//===- BenchToken.h - A token the benchmark makes for itself ----*- C++ -*-===//
//
// The executors that the authentication and wire benchmarks start require
// a token: one fresh 256-bit secret per run, written (mode 0600) into a
// temporary folder of its own, which goes when the token does.
//
//   auto T = BenchToken::make();
//   startLocalExecutor(Env, {"--token-file", (*T)->path()});
//   Options.Secret = (*T)->secret();
//
// Thread safety: made and read on the benchmark's thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_BENCHTOKEN_H
#define CATALYST_REMOTE_BENCH_BENCHTOKEN_H

#include "wire/Secret.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace catalyst::remote::bench {

class BenchToken {
public:
  static llvm::Expected<std::unique_ptr<BenchToken>> make();
  ~BenchToken();
  BenchToken(const BenchToken &) = delete;
  BenchToken &operator=(const BenchToken &) = delete;

  const std::string &path() const { return Path; }
  const SecretBytes &secret() const { return Secret; }

private:
  explicit BenchToken(std::string Dir) : Dir(std::move(Dir)) {}

  std::string Dir, Path;
  SecretBytes Secret;
};

} // namespace catalyst::remote::bench

#endif
