//===- Text.h - What tests ask of error messages ----------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_TEXT_H
#define CATALYST_REMOTE_TESTS_TEXT_H

#include <cstddef>
#include <string>

namespace catalyst::remote::test {

// True when Text contains What.
inline bool mentions(const std::string &Text, const std::string &What) {
  return Text.find(What) != std::string::npos;
}

// How many times What occurs in Text, overlaps included.
inline size_t countOf(const std::string &Text, const std::string &What) {
  size_t N = 0;
  for (size_t At = Text.find(What); At != std::string::npos; At = Text.find(What, At + 1))
    ++N;
  return N;
}

} // namespace catalyst::remote::test

#endif
