//===- ReadableSetTest.cpp - A launch's memrefs checked together ----------===//
//
// Slices of one buffer share pages, and the host checks them with one
// system call per run of pages. Whether the memory is readable is what the
// check must get right, and which memref it names when one is not: the
// first added that cannot be read, even when the failing run of pages is
// shared by others that can.
//
//===----------------------------------------------------------------------===//

#include "wire/ReadableMemory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace catalyst::remote;

namespace {

// Rank-1 byte views: their descriptors live here.
class Views {
public:
  wire::MemrefDesc add(char *Base, int64_t Offset, int64_t Size, int64_t Stride) {
    Words.push_back(std::make_unique<int64_t[]>(5));
    wire::MemrefDesc D(Words.back().get(), 1);
    D.setAllocated(Base);
    D.setAligned(Base);
    D.setOffset(Offset);
    D.setSize(0, Size);
    D.setStride(0, Stride);
    return D;
  }

private:
  std::vector<std::unique_ptr<int64_t[]>> Words;
};

class ReadableSetTest : public ::testing::Test {
protected:
  void SetUp() override {
    Page = sysconf(_SC_PAGESIZE);
    void *M = mmap(nullptr, 8 * Page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(M, MAP_FAILED);
    Mem = static_cast<char *>(M);
    // Pages 0 and 1 readable, 2 not, 3 to 7 readable again.
    ASSERT_EQ(mprotect(Mem + 2 * Page, Page, PROT_NONE), 0);
  }
  void TearDown() override { munmap(Mem, 8 * Page); }

  void add(wire::ReadableSet &S, int64_t Offset, int64_t Size, int64_t Stride = 1) {
    wire::MemrefDesc D = V.add(Mem, Offset, Size, Stride);
    auto L = wire::layoutOf(D, 1, {"input", Added});
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    S.add(D, 1, *L, {"input", Added++});
  }

  std::string check(wire::ReadableSet &S) {
    llvm::Error Err = S.check();
    return Err ? llvm::toString(std::move(Err)) : "";
  }

  long Page = 0;
  char *Mem = nullptr;
  Views V;
  size_t Added = 0;
};

TEST_F(ReadableSetTest, SlicesOfReadablePagesPass) {
  wire::ReadableSet S;
  for (int I = 0; I < 64; ++I)
    add(S, I * Page / 32, Page / 32);
  EXPECT_EQ(check(S), "");
}

// The slices share one run of pages with the bad one: that run fails, and
// the error names the slice that reaches into the bad page, not the first.
TEST_F(ReadableSetTest, TheSliceThatReachesTheBadPageIsNamed) {
  wire::ReadableSet S;
  for (int I = 0; I < 4; ++I)
    add(S, I * Page / 4, Page / 4);
  add(S, Page, Page + 1); // its last byte is on page 2
  add(S, Page / 2, Page);
  std::string Msg = check(S);
  EXPECT_NE(Msg.find("input 4: memory at 0x"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("is not readable"), std::string::npos) << Msg;
}

// A run of pages that is readable does not hide a bad one elsewhere.
TEST_F(ReadableSetTest, ABadPageApartFromTheOthersIsNamed) {
  wire::ReadableSet S;
  add(S, 0, Page);
  add(S, 3 * Page, Page);
  add(S, 2 * Page + 5, 3);
  std::string Msg = check(S);
  EXPECT_NE(Msg.find("input 2: memory at 0x"), std::string::npos) << Msg;
}

// A sparse view (fewer elements than half its pages) is probed element by
// element, on its own: one whose span holds the bad page but none of whose
// elements lie on it is readable, and one with an element there is not.
TEST_F(ReadableSetTest, SparseViewsAreProbedByElement) {
  wire::ReadableSet Around;
  add(Around, 0, Page / 16);
  add(Around, 0, 2, 6 * Page); // pages 0 and 6
  EXPECT_EQ(check(Around), "");
  wire::ReadableSet On;
  add(On, 0, Page / 16);
  add(On, 2 * Page + 1, 2, 5 * Page); // pages 2 and 7
  std::string Msg = check(On);
  EXPECT_NE(Msg.find("input 3: memory at 0x"), std::string::npos) << Msg;
}

// From 16 MiB on, a run is judged from the process's mappings: a hole in
// it, PROT_NONE pages, or the part of a file mapping past the file's end
// must still be found.
class LargeRunTest : public ::testing::Test {
protected:
  static constexpr size_t Size = 32 << 20;

  std::string check(char *Base, int64_t Bytes) {
    Views V;
    wire::MemrefDesc D = V.add(Base, 0, Bytes, 1);
    auto L = wire::layoutOf(D, 1, {"input", 0});
    EXPECT_TRUE(bool(L)) << llvm::toString(L.takeError());
    wire::ReadableSet S;
    S.add(D, 1, *L, {"input", 0});
    llvm::Error Err = S.check();
    return Err ? llvm::toString(std::move(Err)) : "";
  }
};

TEST_F(LargeRunTest, ReadableAnonymousMemoryPasses) {
  void *M = mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(M, MAP_FAILED);
  EXPECT_EQ(check(static_cast<char *>(M), Size), "");
  munmap(M, Size);
}

TEST_F(LargeRunTest, APageThatCannotBeReadIsFound) {
  char *M = static_cast<char *>(
      mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(M, MAP_FAILED);
  long Page = sysconf(_SC_PAGESIZE);
  ASSERT_EQ(mprotect(M + Size / 2, Page, PROT_NONE), 0);
  std::string Msg = check(M, Size);
  EXPECT_NE(Msg.find("is not readable"), std::string::npos) << Msg;
  ASSERT_EQ(munmap(M + Size / 2, Page), 0); // now a hole
  Msg = check(M, Size);
  EXPECT_NE(Msg.find("is not readable"), std::string::npos) << Msg;
  munmap(M, Size);
}

// Reading a shared file mapping past the file's end raises SIGBUS: the
// mapping is readable, its last pages are not.
TEST_F(LargeRunTest, AFileMappingPastItsFilesEndIsFound) {
  int Fd = int(syscall(SYS_memfd_create, "readable-set-test", 0));
  ASSERT_GE(Fd, 0);
  long Page = sysconf(_SC_PAGESIZE);
  ASSERT_EQ(ftruncate(Fd, Size - Page), 0);
  void *M = mmap(nullptr, Size, PROT_READ, MAP_SHARED, Fd, 0);
  ASSERT_NE(M, MAP_FAILED);
  EXPECT_EQ(check(static_cast<char *>(M), Size - Page), "");
  std::string Msg = check(static_cast<char *>(M), Size);
  EXPECT_NE(Msg.find("is not readable"), std::string::npos) << Msg;
  munmap(M, Size);
  close(Fd);
}

} // namespace
