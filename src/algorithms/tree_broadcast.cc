// Pipelined binary-tree broadcast: ranks, counted from the root, form a binary heap (v's parent
// is (v-1)/2, its children 2v+1 and 2v+2). The root streams pieces to its two children and every
// rank forwards each piece to its children as soon as it has it. The last rank gets the first
// piece after about log2(n) hops instead of the chain's n-1, which is what wins for small and
// mid-size messages on many ranks; inner ranks send every byte twice, so on large buffers the
// chain's one send per rank is ahead.
#include <cstring>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void treeBroadcast(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t bytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  const bool isRoot = comm.rank() == args.root;
  if (isRoot && args.send != args.recv && bytes > 0) std::memmove(output, args.send, bytes);
  if (n == 1) return;

  const size_t root = static_cast<size_t>(args.root);
  const size_t self = (static_cast<size_t>(comm.rank()) + n - root) % n;  // 0 at the root
  auto rankAt = [&](size_t v) { return static_cast<int>((v + root) % n); };
  const int parent = isRoot ? -1 : rankAt((self - 1) / 2);
  std::vector<int> children;
  for (size_t child : {2 * self + 1, 2 * self + 2}) {
    if (child < n) children.push_back(rankAt(child));
  }
  std::vector<int> neighbours = children;
  if (parent >= 0) neighbours.push_back(parent);
  comm.connectAll(neighbours);

  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args.tag(), args.type, args.op, pieceBytes);
  // At least one (possibly empty) piece, so every rank takes part in zero-byte calls.
  for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
    const size_t piece = std::min(pieceBytes, bytes - offset);
    if (parent >= 0) prims.recv(parent, output + offset, piece);
    for (int child : children) prims.send(child, output + offset, piece);
    if (bytes == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
