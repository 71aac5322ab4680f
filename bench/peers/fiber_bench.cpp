// Boost.Fiber peer for the libfutoin_async benchmark suite.
//
//   fiber_bench --impl fiber_pooled|fiber_protected --test t1|t2|t3 [--scale F]
//   fiber_bench --impl ... --list
//
// One test per process, one "BENCH ..." line on stdout (see bench_common.h).
// Single thread, default round_robin scheduler, stacks of FIBER_STACK_SIZE
// bytes from pooled_fixedsize_stack (boost::pool backed, reused) or
// protected_fixedsize_stack (one mmap + guard page per fiber).
//
//   t1: N x (launch a fiber with an empty body, join it).          N = 1,000,000
//   t2: batches of 30,000 fibers each blocked in future<int>::get(); all
//       promises then fulfilled with 1, each fiber adds the int to a sink and
//       ends; joined. 33 batches = 990,000 fibers. Also reports bytes per
//       waiting fiber = (VmRSS while the batch waits - VmRSS before the batch
//       was created) / 30,000, the largest over the batches (= first batch).
//   t3: 30,000 fibers loop { fresh promise/future; get(); decrement shared
//       counter }; a controller fiber fulfils them round-robin and yields after
//       each round until 10,000,000 wake-ups. ns per wake-up; the time
//       includes creating and joining the 30,000 fibers.

#include <boost/fiber/all.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "bench_common.h"

#ifndef FIBER_STACK_SIZE
#define FIBER_STACK_SIZE (16 * 1024)
#endif

namespace fibers = boost::fibers;

namespace {

constexpr std::size_t kT2Batch = 30000;
constexpr std::uint64_t kT2Total = 1000000;
constexpr std::size_t kT3Flows = 30000;
constexpr std::uint64_t kT3Wakeups = 10000000;
constexpr std::uint64_t kT1Ops = 1000000;

[[noreturn]] void fail(const char *what)
{
    std::fprintf(stderr, "fiber_bench: check failed: %s\n", what);
    std::exit(2);
}

template <class Salloc>
void run_t1(const char *impl, Salloc &salloc, double scale)
{
    const std::uint64_t n = bench_scaled(kT1Ops, scale, 1);
    std::uint64_t sink = 0;

    const std::uint64_t t0 = bench_now_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
        fibers::fiber f(std::allocator_arg, salloc, [&sink] { ++sink; });
        f.join();
    }
    const std::uint64_t t1 = bench_now_ns();

    if (sink != n)
        fail("t1 sink");
    bench_report(impl, "t1", n, t1 - t0, -1.0);
}

template <class Salloc>
void run_t2(const char *impl, Salloc &salloc, double scale)
{
    const std::uint64_t batches =
        bench_scaled(kT2Total, scale / (double)kT2Batch, 1);
    const std::uint64_t n = batches * kT2Batch;
    std::uint64_t sink = 0;
    std::size_t waiting = 0;
    long max_delta_kb = 0;

    // The bench's own arrays (a promise and a fiber handle per fiber, 24 B
    // or so) are made, and so touched, before the first batch's
    // rss_before, as futoin_bench.c's T2 does: bytes per waiting fiber
    // count what the fiber holds (its stack, its context, its future's
    // shared state), not the bench's bookkeeping. Until issue 22 step 3
    // the arrays were new in each batch and counted in the first.
    std::vector<std::optional<fibers::promise<int>>> proms(kT2Batch);
    std::vector<fibers::fiber> fs(kT2Batch);

    const std::uint64_t t0 = bench_now_ns();
    for (std::uint64_t b = 0; b < batches; ++b) {
        const long rss_before = bench_rss_kb();
        waiting = 0;
        for (std::size_t i = 0; i < kT2Batch; ++i) {
            proms[i].emplace();
            fs[i] = fibers::fiber(std::allocator_arg, salloc,
                                  [&sink, &waiting, fut = proms[i]->get_future()]() mutable {
                                      ++waiting;
                                      sink += (std::uint64_t)fut.get();
                                  });
        }
        // Let every fiber run up to its future::get() and block there.
        boost::this_fiber::yield();
        if (waiting != kT2Batch)
            fail("t2 not all fibers waiting");
        const long rss_waiting = bench_rss_kb();
        if (rss_waiting - rss_before > max_delta_kb)
            max_delta_kb = rss_waiting - rss_before;

        for (auto &p : proms)
            p->set_value(1);
        for (auto &f : fs)
            f.join();
        for (auto &p : proms)
            p.reset();
    }
    const std::uint64_t t1 = bench_now_ns();

    if (sink != n)
        fail("t2 sink");
    bench_report(impl, "t2", n, t1 - t0,
                 (double)max_delta_kb * 1024.0 / (double)kT2Batch);
}

struct T3Slot {
    fibers::promise<int> prom;
    bool armed = false;
};

template <class Salloc>
void run_t3(const char *impl, Salloc &salloc, double scale)
{
    const std::uint64_t total = bench_scaled(kT3Wakeups, scale, 1);
    std::uint64_t counter = total;

    const std::uint64_t t0 = bench_now_ns();
    {
        std::vector<T3Slot> slots(kT3Flows);
        std::vector<fibers::fiber> workers;
        workers.reserve(kT3Flows);

        for (std::size_t i = 0; i < kT3Flows; ++i) {
            workers.emplace_back(std::allocator_arg, salloc, [&counter, &slots, i] {
                T3Slot &s = slots[i];
                for (;;) {
                    fibers::future<int> fut = s.prom.get_future();
                    s.armed = true;
                    const int v = fut.get();
                    if (v < 0)
                        break;
                    counter -= (std::uint64_t)v;
                    s.prom = fibers::promise<int>();
                }
            });
        }

        fibers::fiber controller(std::allocator_arg, salloc, [&slots, total] {
            std::uint64_t woken = 0;
            while (woken < total) {
                for (std::size_t i = 0; i < kT3Flows && woken < total; ++i) {
                    T3Slot &s = slots[i];
                    while (!s.armed)
                        boost::this_fiber::yield();
                    s.armed = false;
                    s.prom.set_value(1);
                    ++woken;
                }
                boost::this_fiber::yield();
            }
            for (auto &s : slots) {  // stop signal, not counted as wake-up
                while (!s.armed)
                    boost::this_fiber::yield();
                s.armed = false;
                s.prom.set_value(-1);
            }
        });

        controller.join();
        for (auto &w : workers)
            w.join();
    }
    const std::uint64_t t1 = bench_now_ns();

    if (counter != 0)
        fail("t3 counter");
    bench_report(impl, "t3", total, t1 - t0, -1.0);
}

template <class Salloc>
int run(const char *impl, const char *test, Salloc salloc, double scale)
{
    if (std::strcmp(test, "t1") == 0)
        run_t1(impl, salloc, scale);
    else if (std::strcmp(test, "t2") == 0)
        run_t2(impl, salloc, scale);
    else if (std::strcmp(test, "t3") == 0)
        run_t3(impl, salloc, scale);
    else {
        std::fprintf(stderr, "fiber_bench: unknown test '%s'\n", test);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    bench_args a;
    if (bench_parse_args(argc, argv, &a) != 0)
        return 1;
    if (a.list) {
        std::puts("t1\nt2\nt3");
        return 0;
    }
    if (!a.test) {
        std::fprintf(stderr, "fiber_bench: --test is required\n");
        return 1;
    }
    const char *impl = a.impl ? a.impl : "fiber_pooled";

    try {
        if (std::strcmp(impl, "fiber_pooled") == 0)
            return run(impl, a.test, fibers::pooled_fixedsize_stack(FIBER_STACK_SIZE),
                       a.scale);
        if (std::strcmp(impl, "fiber_protected") == 0)
            return run(impl, a.test, fibers::protected_fixedsize_stack(FIBER_STACK_SIZE),
                       a.scale);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "fiber_bench: %s\n", e.what());
        return 2;
    }
    std::fprintf(stderr, "fiber_bench: unknown impl '%s' (fiber_pooled|fiber_protected)\n",
                 impl);
    return 1;
}
