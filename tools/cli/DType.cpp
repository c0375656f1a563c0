//===- DType.cpp - Element types as NumPy names them ----------------------===//

#include "DType.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

const DType Types[] = {
    {"bool", "bool", 'b', 1},     {"int8", "i8", 'i', 1},          {"int16", "i16", 'i', 2},
    {"int32", "i32", 'i', 4},     {"int64", "i64", 'i', 8},        {"uint8", "u8", 'u', 1},
    {"uint16", "u16", 'u', 2},    {"uint32", "u32", 'u', 4},       {"uint64", "u64", 'u', 8},
    {"float16", "f16", 'f', 2},   {"float32", "f32", 'f', 4},      {"float64", "f64", 'f', 8},
    {"complex64", "c64", 'c', 8}, {"complex128", "c128", 'c', 16},
};

Error unsupported(StringRef Descr, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "dtype '" + Descr + "' " + Why);
}

// NumPy kinds that hold no numbers a kernel takes.
const char *kindName(char Kind) {
  switch (Kind) {
  case 'O':
    return "holds Python objects";
  case 'V':
    return "is raw or structured data";
  case 'S':
  case 'a':
    return "holds byte strings";
  case 'U':
    return "holds text";
  case 'M':
    return "holds dates";
  case 'm':
    return "holds time differences";
  default:
    return nullptr;
  }
}

} // namespace

std::string DType::descr() const {
  return (Bytes == 1 ? "|" : "<") + std::string(1, Code) + std::to_string(Bytes);
}

Expected<DType> dtypeNamed(StringRef Name) {
  for (const DType &T : Types)
    if (Name == T.Name || Name == T.Short)
      return T;
  return createStringError(inconvertibleErrorCode(),
                           "unknown dtype '%s': use one of %s, or short f64, f32, f16, i8 to i64, "
                           "u8 to u64, c64, c128 (bits, as in the NumPy names)",
                           Name.str().c_str(), dtypeNames().c_str());
}

Expected<DType> dtypeOfDescr(StringRef Descr) {
  if (Descr.size() < 2)
    return unsupported(Descr, "is not a NumPy type string");
  char Order = Descr[0];
  char Kind = Descr[1];
  unsigned Bytes = 0;
  if (!StringRef("<>|=").contains(Order) || Descr.drop_front(2).getAsInteger(10, Bytes))
    return unsupported(Descr, kindName(Kind) ? Twine(kindName(Kind)) + ", not numbers"
                                             : Twine("is not a NumPy type string"));
  if (const char *What = kindName(Kind))
    return unsupported(Descr, Twine(What) + ", not numbers");
  const DType *T =
      find_if(Types, [&](const DType &T) { return T.Code == Kind && T.Bytes == Bytes; });
  if (T == std::end(Types))
    return unsupported(Descr, "is no type a memref carries (" + dtypeNames() + ")");
  // One byte has no order; NumPy writes '|', and any mark means the same.
  if (Bytes == 1 || Order == '<')
    return *T;
  if (Order == '>')
    return unsupported(Descr, "is big-endian: save it little-endian (a.astype('<" + Twine(Kind) +
                                  Twine(Bytes) + "'))");
  return unsupported(Descr, "does not say its byte order ('<' little-endian, as NumPy writes it)");
}

std::string dtypeNames() {
  return join(map_range(Types, [](const DType &T) { return StringRef(T.Name); }), ", ");
}

} // namespace catalyst::remote::cli
