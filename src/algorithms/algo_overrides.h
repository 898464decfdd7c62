// HOOP_ALGO: which schedule serves which collective at which sizes, overriding hoop's choice.
//
//   HOOP_ALGO="allreduce:0-64K=oneshot,64K-=ring;broadcast:=ring"
//   HOOP_ALGO=ring                    a bare name: every collective that has a schedule so named
//
// Grammar: items separated by ';'. An item is a bare schedule name, or COLLECTIVE ':' followed
// by rules separated by ','. A rule is [RANGE] '=' NAME; a RANGE is LOW '-' HIGH in bytes (K, M,
// G suffixes are binary), either end may be left out, and HIGH is exclusive; no range: every
// size. The size a rule matches is the one hoop-perf reports for the call: the whole buffer for
// allreduce, broadcast and reduce, all ranks' blocks together for allgather, reducescatter and
// alltoall. The first rule that matches wins; a forced schedule that cannot serve a call (a
// hierarchical one on a single host, say) leaves that call to hoop's own choice.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/types.h"

namespace hoop {

struct AlgorithmEntry;

// Each rule's schedule is resolved to its registry entry as the text is read: after parse(), no
// decision reads a name.
class AlgoOverrides {
 public:
  // Throws hoopInvalidArgument naming HOOP_ALGO and the token it could not read, with what
  // would have been accepted there.
  static AlgoOverrides parse(std::string_view text);

  // The forced schedule for a call of `kind` moving `bytes` (as above), or nullptr for none.
  const AlgorithmEntry* forced(OpKind kind, size_t bytes) const;
  bool empty() const { return rules_.empty(); }
  const std::string& text() const { return text_; }

 private:
  struct Rule {
    OpKind kind;
    size_t low;   // inclusive
    size_t high;  // exclusive; SIZE_MAX: no upper end
    const AlgorithmEntry* schedule;
  };
  std::vector<Rule> rules_;
  std::string text_;
};

}  // namespace hoop
