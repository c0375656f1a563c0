//===- Text.h - What tests ask of error messages ----------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_TEXT_H
#define CATALYST_REMOTE_TESTS_TEXT_H

#include <string>

namespace catalyst::remote::test {

// True when Text contains What.
inline bool mentions(const std::string &Text, const std::string &What) {
  return Text.find(What) != std::string::npos;
}

} // namespace catalyst::remote::test

#endif
