// The smallest complete hoop program in C++: typed spans, RAII, exceptions on failure.
// Run it with:  hooprun -np 4 ./allreduce_cpp
#include <cstdio>
#include <hoop/hoop.hpp>
#include <vector>

int main() {
  try {
    // Rank, size and rendezvous from the launcher; destroyed when it goes out of scope.
    auto comm = hoop::Communicator::fromEnvironment();
    const int rank = comm.rank();
    const int size = comm.size();

    // Gradients of a pretend model: average them across ranks, in place.
    std::vector<double> gradients(1 << 20, static_cast<double>(rank));
    comm.allReduce(std::span<double>(gradients), hoopAvg);

    // Collect one value from every rank.
    std::vector<int> ranks(static_cast<size_t>(size));
    const int mine = rank;
    comm.allGather(std::span<const int>(&mine, 1), std::span<int>(ranks));

    const double expected = (size - 1) / 2.0;
    const bool ok = gradients.front() == expected && ranks.back() == size - 1;
    std::printf("rank %d of %d: average = %.2f (%s)\n", rank, size, gradients.front(),
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const hoop::Exception& e) {
    std::fprintf(stderr, "hoop error %d: %s\n", e.code(), e.what());
    return 1;
  }
}
