//===- Npy.cpp - NumPy .npy files in and out ------------------------------===//

#include "Npy.h"

#include "NpyHeader.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

constexpr char Magic[] = "\x93NUMPY";
constexpr size_t MagicSize = 6;
// Ours come to a few hundred bytes (64 dimensions); NumPy refuses headers
// above 10000 bytes unless told otherwise.
constexpr uint64_t MaxHeader = 1 << 20;
// NumPy aligns the data to this, and so do we.
constexpr size_t HeaderAlign = 64;

Error fileError(StringRef Path, const Twine &What) {
  return createStringError(inconvertibleErrorCode(), Path + ": " + What);
}

Error sysError(StringRef Path, const Twine &What) {
  return createStringError(std::error_code(errno, std::generic_category()),
                           Path + ": " + What + ": " + std::strerror(errno));
}

// A file descriptor closed on scope exit.
struct Fd {
  int N = -1;
  ~Fd() {
    if (N >= 0)
      ::close(N);
  }
};

// Reads exactly Size bytes at Offset; Got says how many there were.
Error readAt(int F, StringRef Path, char *Dst, uint64_t Size, uint64_t Offset, uint64_t &Got) {
  Got = 0;
  while (Got < Size) {
    size_t Want = std::min<uint64_t>(Size - Got, 1 << 30);
    ssize_t N = ::pread(F, Dst + Got, Want, off_t(Offset + Got));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return sysError(Path, "cannot read");
    if (N == 0)
      return Error::success();
    Got += uint64_t(N);
  }
  return Error::success();
}

// The header's length, from the preamble (magic, version, length field);
// sets Start to where the header text begins.
Expected<uint64_t> headerLength(StringRef Path, const char *Pre, uint64_t Got, uint64_t &Start) {
  if (Got == 0)
    return fileError(Path, "empty, not an .npy file");
  if (std::memcmp(Pre, Magic, std::min<uint64_t>(Got, MagicSize)) != 0)
    return fileError(Path, "not an .npy file (it does not start with \\x93NUMPY)");
  if (Got < MagicSize + 2)
    return fileError(Path, "truncated: the file ends inside its preamble");
  unsigned Major = uint8_t(Pre[6]), Minor = uint8_t(Pre[7]);
  if ((Major != 1 && Major != 2 && Major != 3) || Minor != 0)
    return fileError(
        Path, formatv("unknown .npy version {0}.{1} (1.0, 2.0 and 3.0 are read)", Major, Minor));
  Start = Major == 1 ? 10 : 12;
  if (Got < Start)
    return fileError(Path, "truncated: the file ends inside its preamble");
  uint64_t Length =
      Major == 1 ? support::endian::read16le(Pre + 8) : support::endian::read32le(Pre + 8);
  if (Length > MaxHeader)
    return fileError(
        Path, formatv("its header claims {0} bytes; more than {1} is refused", Length, MaxHeader));
  return Length;
}

Expected<NpyHeader> readHeader(int F, StringRef Path, uint64_t FileSize, uint64_t &DataStart) {
  char Pre[12];
  uint64_t Got = 0, Start = 0;
  if (auto Err = readAt(F, Path, Pre, sizeof(Pre), 0, Got))
    return Err;
  auto Length = headerLength(Path, Pre, Got, Start);
  if (!Length)
    return Length.takeError();
  if (Start + *Length > FileSize)
    return fileError(Path, formatv("truncated: its header claims {0} bytes, the file ends after "
                                   "{1}",
                                   *Length, FileSize - Start));
  std::string Text(*Length, '\0');
  if (auto Err = readAt(F, Path, Text.data(), *Length, Start, Got))
    return Err;
  if (Got != *Length)
    return fileError(Path, "truncated while it was read (is it being written?)");
  DataStart = Start + *Length;
  auto H = parseNpyHeader(Text);
  if (!H)
    return fileError(Path, toString(H.takeError()));
  return H;
}

// The array H describes, checked against the DataBytesInFile the file has
// for its values; Bytes is what they take.
Expected<NpyArray> arrayOf(StringRef Path, const NpyHeader &H, uint64_t DataBytesInFile,
                           uint64_t &Bytes) {
  auto Type = dtypeOfDescr(H.Descr);
  if (!Type)
    return fileError(Path, toString(Type.takeError()));
  auto Count = byteCount(*Type, H.Shape);
  if (!Count)
    return fileError(Path, toString(Count.takeError()));
  Bytes = *Count;
  if (Bytes > DataBytesInFile)
    return fileError(Path,
                     formatv("truncated: its shape needs {0} bytes of {1}, the file holds {2} "
                             "after its header",
                             Bytes, Type->Name, DataBytesInFile));
  if (Bytes < DataBytesInFile)
    return fileError(Path, formatv("{0} bytes follow the {1} bytes its header describes",
                                   DataBytesInFile - Bytes, Bytes));
  NpyArray A;
  A.Type = *Type;
  A.Shape = H.Shape;
  A.FortranOrder = H.FortranOrder;
  return A;
}

Error writeAll(int F, StringRef Path, const char *Data, uint64_t Size) {
  while (Size > 0) {
    ssize_t N = ::write(F, Data, std::min<uint64_t>(Size, 1 << 30));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return sysError(Path, "cannot write");
    Data += N;
    Size -= uint64_t(N);
  }
  return Error::success();
}

// Magic, version 1.0, length, and the dictionary padded so that the data
// starts 64-byte aligned.
std::string preamble(const DType &Type, ArrayRef<int64_t> Shape) {
  std::string Dict = formatNpyHeader({Type.descr(), false, Shape.vec()});
  size_t Total = 10 + Dict.size() + 1;
  Dict.append((HeaderAlign - Total % HeaderAlign) % HeaderAlign, ' ');
  Dict += '\n';
  std::string Out(Magic, MagicSize);
  Out += '\x01';
  Out += '\x00';
  char Length[2];
  support::endian::write16le(Length, uint16_t(Dict.size()));
  Out.append(Length, 2);
  return Out + Dict;
}

// A fresh file beside Path to write it in, named in Partial: never one
// that exists, nor the target of a symlink someone planted there, so that
// writing it can replace nothing but Path itself, renamed over at the end.
Expected<int> createPartial(StringRef Path, std::string &Partial) {
  for (unsigned Try = 0;; ++Try) {
    Partial = formatv("{0}.partial-{1}-{2}", Path, ::getpid(), Try).str();
    int N = ::open(Partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (N >= 0)
      return N;
    if (errno != EEXIST || Try == 100)
      return sysError(Partial, "cannot create");
  }
}

} // namespace

AlignedBuffer AlignedBuffer::allocate(uint64_t Bytes) {
  AlignedBuffer B;
  uint64_t Rounded = (std::max<uint64_t>(Bytes, 1) + 63) & ~uint64_t(63);
  if (Rounded < Bytes)
    return B;
  B.Data.reset(static_cast<char *>(std::aligned_alloc(64, Rounded)));
  B.Bytes = B.Data ? Bytes : 0;
  return B;
}

Expected<uint64_t> byteCount(const DType &Type, ArrayRef<int64_t> Shape) {
  // Empty dimensions make no bytes, yet strides still span the others: both
  // must fit.
  uint64_t Bytes = Type.Bytes, Span = Type.Bytes;
  for (int64_t D : Shape) {
    if (D < 0 || __builtin_mul_overflow(Span, uint64_t(std::max<int64_t>(D, 1)), &Span) ||
        Span > uint64_t(INT64_MAX))
      return createStringError(inconvertibleErrorCode(),
                               "its shape's size overflows: more than 2^63 bytes");
    Bytes *= uint64_t(D);
  }
  return Bytes;
}

Expected<NpyArray> readNpy(StringRef Path) {
  Fd F{::open(Path.str().c_str(), O_RDONLY | O_CLOEXEC)};
  if (F.N < 0)
    return sysError(Path, "cannot open");
  struct stat St;
  if (::fstat(F.N, &St) != 0)
    return sysError(Path, "cannot stat");
  if (!S_ISREG(St.st_mode))
    return fileError(Path, "not a regular file");
  uint64_t FileSize = uint64_t(St.st_size), DataStart = 0, Bytes = 0;
  auto H = readHeader(F.N, Path, FileSize, DataStart);
  if (!H)
    return H.takeError();
  auto A = arrayOf(Path, *H, FileSize - DataStart, Bytes);
  if (!A)
    return A.takeError();
  A->Data = AlignedBuffer::allocate(Bytes);
  if (!A->Data)
    return fileError(Path, formatv("cannot allocate {0} bytes for its values", Bytes));
  uint64_t Got = 0;
  if (auto Err = readAt(F.N, Path, A->Data.data(), Bytes, DataStart, Got))
    return Err;
  if (Got != Bytes)
    return fileError(Path, "truncated while it was read (is it being written?)");
  return A;
}

Error writeNpy(StringRef Path, const DType &Type, ArrayRef<int64_t> Shape, const char *Data) {
  auto Bytes = byteCount(Type, Shape);
  if (!Bytes)
    return fileError(Path, toString(Bytes.takeError()));
  std::string Partial;
  auto Created = createPartial(Path, Partial);
  if (!Created)
    return Created.takeError();
  Fd F{*Created};
  std::string Pre = preamble(Type, Shape);
  Error Err = writeAll(F.N, Partial, Pre.data(), Pre.size());
  if (!Err)
    Err = writeAll(F.N, Partial, Data, *Bytes);
  if (!Err && ::close(std::exchange(F.N, -1)) != 0)
    Err = sysError(Partial, "cannot write");
  if (!Err && ::rename(Partial.c_str(), Path.str().c_str()) != 0)
    Err = sysError(Path, "cannot rename " + Partial + " to it");
  if (Err)
    // Err says why; the partial file keeps a name no reader takes for the array.
    ::unlink(Partial.c_str());
  return Err;
}

} // namespace catalyst::remote::cli
