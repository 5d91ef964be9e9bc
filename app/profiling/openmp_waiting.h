#pragma once
// How long OpenMP's idle threads spin before they sleep. libgomp spins for 300,000 rounds by
// default (about a millisecond here) at every barrier; on a desktop whose cores other programs
// hold, each of a run's hundreds of parallel regions then waits for a thread that spins on a
// core it shares: resnet50 at two threads took 732 ms with both cores busy against 32 ms at
// one thread. Bounded at 10,000 rounds it takes 37 ms, and idle runs are as fast as before
// (docs/benchmarks.md, 2026-11-28). libgomp reads its settings when it is loaded, before
// main(), so the process starts itself again once with the bound set.

namespace fsc {

// Call first thing in main(). Unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT (which
// are then left alone), sets GOMP_SPINCOUNT and executes this program again with the same
// arguments; returns (and the run goes on unbounded) only if that fails.
void boundOpenMpSpinning(char** argv);

// The spin count set, for messages and tests.
inline constexpr const char* kOpenMpSpinCount = "10000";

}  // namespace fsc
