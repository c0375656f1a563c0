//===- NpyHeader.cpp - The dictionary at the start of an .npy file --------===//

#include "NpyHeader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cctype>
#include <optional>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

// A cursor over the header text with the grammar's pieces.
class Reader {
public:
  explicit Reader(StringRef Text) : Text(Text) {}

  Error fail(const Twine &What) const {
    return createStringError(inconvertibleErrorCode(),
                             formatv("header: {0} at character {1}", What, At).str());
  }

  void skipSpace() {
    while (At < Text.size() && isSpace(Text[At]))
      ++At;
  }

  bool eat(char C) {
    skipSpace();
    if (At < Text.size() && Text[At] == C) {
      ++At;
      return true;
    }
    return false;
  }

  Error expect(char C, const char *What) {
    if (eat(C))
      return Error::success();
    return fail(Twine("expected ") + What);
  }

  bool atEnd() {
    skipSpace();
    return At == Text.size();
  }

  char peek() {
    skipSpace();
    return At < Text.size() ? Text[At] : '\0';
  }

  Expected<std::string> string() {
    char Quote = peek();
    if (Quote != '\'' && Quote != '"')
      return fail("expected a quoted string");
    size_t End = Text.find(Quote, At + 1);
    if (End == StringRef::npos)
      return fail("unterminated string");
    std::string S = Text.slice(At + 1, End).str();
    At = End + 1;
    return S;
  }

  Expected<bool> boolean() {
    skipSpace();
    for (auto [Word, Value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (Text.substr(At).starts_with(Word)) {
        At += StringRef(Word).size();
        return Value;
      }
    return fail("expected True or False");
  }

  Expected<int64_t> integer() {
    skipSpace();
    size_t Start = At;
    while (At < Text.size() && isDigit(Text[At]))
      ++At;
    int64_t V = 0;
    if (Start == At || Text.slice(Start, At).getAsInteger(10, V))
      return fail("expected a dimension (a non-negative integer below 2^63)");
    if (At < Text.size() && Text[At] == 'L') // Python 2's long
      ++At;
    return V;
  }

  // "()", "(3,)", "(2, 3)", "(2, 3,)".
  Expected<std::vector<int64_t>> shape() {
    if (auto Err = expect('(', "a shape tuple"))
      return Err;
    std::vector<int64_t> Dims;
    while (!eat(')')) {
      if (Dims.size() == MaxNpyRank)
        return fail(formatv("more than {0} dimensions", MaxNpyRank).str());
      auto D = integer();
      if (!D)
        return D.takeError();
      Dims.push_back(*D);
      if (!eat(',')) {
        if (auto Err = expect(')', "',' or ')' in the shape"))
          return Err;
        break;
      }
    }
    return Dims;
  }

private:
  StringRef Text;
  size_t At = 0;
};

// Reads the value of Key into H.
Error readValue(Reader &R, StringRef Key, NpyHeader &H) {
  if (Key == "descr") {
    if (R.peek() == '[')
      return R.fail("the dtype is structured (a list of fields); only plain numbers can be "
                    "carried");
    auto S = R.string();
    if (!S)
      return S.takeError();
    H.Descr = std::move(*S);
    return Error::success();
  }
  if (Key == "fortran_order") {
    auto B = R.boolean();
    if (!B)
      return B.takeError();
    H.FortranOrder = *B;
    return Error::success();
  }
  if (Key == "shape") {
    auto Dims = R.shape();
    if (!Dims)
      return Dims.takeError();
    H.Shape = std::move(*Dims);
    return Error::success();
  }
  return R.fail("unknown key '" + Key + "' (an .npy header has descr, fortran_order, shape)");
}

} // namespace

Expected<NpyHeader> parseNpyHeader(StringRef Text) {
  Reader R(Text);
  NpyHeader H;
  if (auto Err = R.expect('{', "'{'"))
    return Err;
  std::vector<std::string> Seen;
  while (!R.eat('}')) {
    auto Key = R.string();
    if (!Key)
      return Key.takeError();
    if (is_contained(Seen, *Key))
      return R.fail("key '" + *Key + "' appears twice");
    Seen.push_back(*Key);
    if (auto Err = R.expect(':', "':' after a key"))
      return Err;
    if (auto Err = readValue(R, *Key, H))
      return Err;
    if (!R.eat(',')) {
      if (auto Err = R.expect('}', "',' or '}'"))
        return Err;
      break;
    }
  }
  if (!R.atEnd())
    return R.fail("text after the dictionary");
  for (const char *Key : {"descr", "fortran_order", "shape"})
    if (!is_contained(Seen, Key))
      return R.fail(Twine("no '") + Key + "' key");
  return H;
}

std::string formatNpyHeader(const NpyHeader &H) {
  std::string Shape =
      "(" + join(map_range(H.Shape, [](int64_t D) { return std::to_string(D); }), ", ");
  Shape += H.Shape.size() == 1 ? ",)" : ")";
  return formatv("{{'descr': '{0}', 'fortran_order': {1}, 'shape': {2}, }", H.Descr,
                 H.FortranOrder ? "True" : "False", Shape)
      .str();
}

} // namespace catalyst::remote::cli
