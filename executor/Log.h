//===- Log.h - One line of the executor's log -------------------*- C++ -*-===//
//
// The listener and every connection process share one stderr. A line built
// here goes out in a single write when the statement ends, so lines of
// processes logging at once never interleave mid-line:
//
//   LogLine() << "connection process " << Pid << " exited";
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_LOG_H
#define CATALYST_REMOTE_EXECUTOR_LOG_H

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <unistd.h>

namespace catalyst::remote::executor {

class LogLine {
public:
  LogLine() : OS(Text) {}
  ~LogLine() {
    OS << '\n';
    // A log line that cannot be written has nowhere else to go.
    [[maybe_unused]] ssize_t N = ::write(STDERR_FILENO, Text.data(), Text.size());
  }
  LogLine(const LogLine &) = delete;
  LogLine &operator=(const LogLine &) = delete;

  template <typename T> LogLine &operator<<(const T &V) {
    OS << V;
    return *this;
  }

private:
  std::string Text;
  llvm::raw_string_ostream OS;
};

} // namespace catalyst::remote::executor

#endif
