//===- LaunchCase.cpp - The memrefs one launch benchmark moves ------------===//

#include "LaunchCase.h"

#include "BenchEnv.h"

#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// A descriptor is { allocated, aligned, offset, sizes[rank], strides[rank] },
// every field 8 bytes; the case keeps each as that many int64 words.
constexpr size_t wordsFor(unsigned Rank) {
  return 3 + 2 * size_t(Rank);
}

void setPointer(int64_t *Desc, size_t Slot, const void *P) {
  std::memcpy(&Desc[Slot], &P, sizeof(P));
}

void *pointerAt(const int64_t *Desc, size_t Slot) {
  void *P;
  std::memcpy(&P, &Desc[Slot], sizeof(P));
  return P;
}

// Read access to one descriptor of the case's rank.
struct View {
  const int64_t *D;
  unsigned Rank;

  const char *aligned() const { return static_cast<const char *>(pointerAt(D, 1)); }
  int64_t offset() const { return D[2]; }
  int64_t size(unsigned I) const { return D[3 + I]; }
  int64_t stride(unsigned I) const { return D[3 + Rank + I]; }

  uint64_t elements() const {
    uint64_t N = 1;
    for (unsigned I = 0; I < Rank; ++I)
      N *= uint64_t(size(I));
    return N;
  }
  // Offset, in elements from aligned, of the P-th element in row-major order.
  int64_t elementAt(uint64_t P) const {
    int64_t Off = offset();
    for (unsigned I = Rank; I-- > 0;) {
      Off += int64_t(P % uint64_t(size(I))) * stride(I);
      P /= uint64_t(size(I));
    }
    return Off;
  }
  bool rowMajor() const {
    int64_t Expected = 1;
    for (unsigned I = Rank; I-- > 0;) {
      if (size(I) > 1 && stride(I) != Expected)
        return false;
      Expected *= size(I);
    }
    return true;
  }
};

Error wrongOutput(size_t I, const Twine &What) {
  return createStringError(inconvertibleErrorCode(),
                           "forward returned output " + Twine(I) + " " + What);
}

// Output Out must hold In's values, densely in row-major order.
Error checkOutput(size_t I, View In, View Out, size_t ElemSize, bool Everything) {
  for (unsigned K = 0; K < In.Rank; ++K)
    if (Out.size(K) != In.size(K))
      return wrongOutput(I, "with another shape than its input");
  uint64_t N = In.elements();
  if (N == 0)
    return Error::success();
  if (!Out.aligned() || !Out.rowMajor())
    return wrongOutput(I, "without a dense row-major buffer");
  const char *Got = Out.aligned() + Out.offset() * int64_t(ElemSize);
  auto Same = [&](uint64_t P) {
    return std::memcmp(In.aligned() + In.elementAt(P) * int64_t(ElemSize), Got + P * ElemSize,
                       ElemSize) == 0;
  };
  bool Ok = true;
  if (!Everything)
    Ok = Same(0) && Same(N / 2) && Same(N - 1);
  else if (In.rowMajor()) // a slice: one comparison
    Ok = std::memcmp(In.aligned() + In.offset() * int64_t(ElemSize), Got, N * ElemSize) == 0;
  else
    for (uint64_t P = 0; P < N && Ok; ++P)
      Ok = Same(P);
  return Ok ? Error::success() : wrongOutput(I, "with values its input does not have");
}

// Distinct 8-byte words, so a transposition that reads the wrong element
// cannot find the same bytes there by chance.
void fillPattern(std::vector<char> &Buf) {
  for (size_t I = 0; I + 8 <= Buf.size(); I += 8) {
    uint64_t Word = (uint64_t(I) + 1) * 0x9e3779b97f4a7c15ULL;
    std::memcpy(&Buf[I], &Word, 8);
  }
}

// 2^E elements as a [D0][D1][D2] array as close to a cube as powers of two
// allow.
void cubeDims(uint64_t Elements, int64_t Dims[3]) {
  unsigned E = 0;
  while ((uint64_t(1) << (E + 1)) <= Elements)
    ++E;
  unsigned E2 = E / 3, E1 = (E - E2) / 2;
  Dims[0] = int64_t(1) << (E - E1 - E2);
  Dims[1] = int64_t(1) << E1;
  Dims[2] = int64_t(1) << E2;
}

} // namespace

std::string forwardEntry(const CaseShape &Shape) {
  return "forward_" + std::to_string(Shape.Inputs) + "_r" + std::to_string(Shape.rank());
}

LaunchCase::LaunchCase(const CaseShape &Shape)
    : Shape(Shape), Entry(forwardEntry(Shape)), Words(wordsFor(Shape.rank())), Base(Shape.Bytes),
      InWords(Shape.Inputs * Words), OutWords(Shape.Inputs * Words) {
  fillPattern(Base);
  if (Shape.Strided)
    buildTransposed();
  else
    buildSlices();
  for (unsigned I = 0; I < Shape.Inputs; ++I) {
    InArgs.push_back({inDesc(I), Shape.rank(), Shape.elemSize()});
    OutArgs.push_back({outDesc(I), Shape.rank(), Shape.elemSize()});
    if (Shape.Into) {
      Lent.emplace_back(Shape.Bytes / Shape.Inputs);
      LentRefs.push_back(Lent.back());
    }
  }
}

// Views into the one buffer, as a caller slicing a tensor would pass them.
void LaunchCase::buildSlices() {
  int64_t Part = int64_t(Shape.Bytes / Shape.Inputs);
  for (unsigned I = 0; I < Shape.Inputs; ++I) {
    int64_t *D = inDesc(I);
    setPointer(D, 0, Base.data());
    setPointer(D, 1, Base.data());
    D[2] = int64_t(I) * Part;
    D[3] = Part;
    D[4] = 1;
  }
}

// The buffer is a dense [D0][D1][D2] array; the view is [D2][D1][D0] with
// strides {1, D2, D1 * D2}.
void LaunchCase::buildTransposed() {
  int64_t Dims[3];
  cubeDims(Shape.Bytes / Shape.elemSize(), Dims);
  int64_t *D = inDesc(0);
  setPointer(D, 0, Base.data());
  setPointer(D, 1, Base.data());
  D[2] = 0;
  const int64_t Sizes[3] = {Dims[2], Dims[1], Dims[0]};
  const int64_t Strides[3] = {1, Dims[2], Dims[1] * Dims[2]};
  std::memcpy(&D[3], Sizes, sizeof(Sizes));
  std::memcpy(&D[6], Strides, sizeof(Strides));
}

LaunchCall LaunchCase::call() {
  std::fill(OutWords.begin(), OutWords.end(), 0);
  return LaunchCall{Entry, ForwardKernel, InArgs, OutArgs, LentRefs};
}

bool LaunchCase::receivedIntoLent(size_t I) {
  return Shape.Into && pointerAt(outDesc(I), 0) == Lent[I].data();
}

void LaunchCase::freeOutputs() {
  for (unsigned I = 0; I < Shape.Inputs; ++I)
    if (!receivedIntoLent(I))
      std::free(pointerAt(outDesc(I), 0));
}

Error LaunchCase::finish(bool Everything) {
  Error Err = Error::success();
  for (unsigned I = 0; I < Shape.Inputs && !Err; ++I) {
    Err = checkOutput(I, View{inDesc(I), Shape.rank()}, View{outDesc(I), Shape.rank()},
                      Shape.elemSize(), Everything);
    if (!Err && Shape.Into && !receivedIntoLent(I))
      Err = createStringError(inconvertibleErrorCode(),
                              "output %u was not received into the buffer lent for it", I);
  }
  freeOutputs();
  return Err;
}

Expected<double> LaunchCase::run(Session &S, bool Everything) {
  LaunchCall Call = call();
  auto Start = Clock::now();
  if (auto Err = S.launch(Call))
    return Err;
  double Seconds = secondsSince(Start);
  if (auto Err = finish(Everything))
    return Err;
  return Seconds;
}

void compareLaunches(benchmark::State &State, Session &Plain, Session &Other,
                     const char *OtherCounter, uint64_t Bytes) {
  LaunchCase L({Bytes});
  for (Session *S : {&Plain, &Other})
    if (auto Warm = L.run(*S, /*Everything=*/true); !Warm)
      return fail(State, Warm.takeError());
  std::vector<double> OnPlain, OnOther;
  bool OtherFirst = false;
  for (auto _ : State) {
    Session *Order[] = {OtherFirst ? &Other : &Plain, OtherFirst ? &Plain : &Other};
    for (Session *S : Order) {
      auto T = L.run(*S, /*Everything=*/false);
      if (!T)
        return fail(State, T.takeError());
      (S == &Plain ? OnPlain : OnOther).push_back(*T);
    }
    State.SetIterationTime(OnOther.back());
    OtherFirst = !OtherFirst;
  }
  State.counters["plain_us"] = median(OnPlain) * 1e6;
  State.counters[OtherCounter] = median(OnOther) * 1e6;
  State.counters["ratio_to_plain"] = median(OnOther) / median(OnPlain);
}

} // namespace catalyst::remote::bench
