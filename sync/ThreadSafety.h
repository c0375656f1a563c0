//===- ThreadSafety.h - Clang thread-safety attributes ----------*- C++ -*-===//
//
// The attributes of Clang's thread-safety analysis (-Wthread-safety), named
// as its documentation names them. Each states who may touch what: a member
// GUARDED_BY(M) is read and written only with M held, a method REQUIRES(M)
// is called with M held, one EXCLUDES(M) without it. Clang checks them at
// compile time (tools/thread-safety-check); other compilers see nothing.
//
// A member no lock guards (an atomic, or one thread's own) says in a comment
// which thread owns it instead.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SYNC_THREADSAFETY_H
#define CATALYST_REMOTE_SYNC_THREADSAFETY_H

#if defined(__clang__)
#define CATALYST_REMOTE_TSA(X) __attribute__((X))
#else
#define CATALYST_REMOTE_TSA(X)
#endif

// On a class: its objects are locks (capabilities) of the kind Name.
#define CAPABILITY(Name) CATALYST_REMOTE_TSA(capability(Name))
// On a class: an object that holds a lock from construction to destruction.
#define SCOPED_CAPABILITY CATALYST_REMOTE_TSA(scoped_lockable)
// On a member: read and written only with the lock held (shared suffices to read).
#define GUARDED_BY(M) CATALYST_REMOTE_TSA(guarded_by(M))
// On a pointer member: what it points to is guarded by the lock.
#define PT_GUARDED_BY(M) CATALYST_REMOTE_TSA(pt_guarded_by(M))
// On a lock member: taken before (or after) the listed locks, never the other way.
#define ACQUIRED_BEFORE(...) CATALYST_REMOTE_TSA(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) CATALYST_REMOTE_TSA(acquired_after(__VA_ARGS__))
// On a function: its caller holds the lock (exclusively, or at least shared).
#define REQUIRES(...) CATALYST_REMOTE_TSA(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) CATALYST_REMOTE_TSA(requires_shared_capability(__VA_ARGS__))
// On a function: it takes the lock and returns holding it (or releases one held).
#define ACQUIRE(...) CATALYST_REMOTE_TSA(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) CATALYST_REMOTE_TSA(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) CATALYST_REMOTE_TSA(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) CATALYST_REMOTE_TSA(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) CATALYST_REMOTE_TSA(release_generic_capability(__VA_ARGS__))
// On a function: it takes the lock when it returns Value.
#define TRY_ACQUIRE(...) CATALYST_REMOTE_TSA(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) CATALYST_REMOTE_TSA(try_acquire_shared_capability(__VA_ARGS__))
// On a function: its caller must not hold the lock (it takes it itself).
#define EXCLUDES(...) CATALYST_REMOTE_TSA(locks_excluded(__VA_ARGS__))
// On a function: it checks at run time that the lock is held.
#define ASSERT_CAPABILITY(X) CATALYST_REMOTE_TSA(assert_capability(X))
// On a function: it returns a reference to the lock named.
#define RETURN_CAPABILITY(X) CATALYST_REMOTE_TSA(lock_returned(X))
// On one small function the analysis cannot follow (a lock handed from one
// function to another): a comment beside it says why it is right.
#define NO_THREAD_SAFETY_ANALYSIS CATALYST_REMOTE_TSA(no_thread_safety_analysis)

#endif
