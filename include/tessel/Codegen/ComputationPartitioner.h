//===- ComputationPartitioner.h - Cut a fused computation into functions --===//
//
// A fusion emitter writes one function per *subgraph* of a fused
// computation:
//
//   (%p0: tensor<...>, ..., %pn: tensor<...>, %i0: index, ..., %i_{r-1}:
//   index) -> element of the root
//
// one tensor per parameter of the computation, one index per dim of the
// subgraph's root. Its body emits each instruction of the subgraph
// elementally, recursing into operands until the subgraph's edge: there it
// extracts from a parameter tensor or calls the function of the subgraph
// whose root it reads. An instruction can only go into its users' function
// when every path reads it at the same index; otherwise the function would
// compute it once per index it is read at, and with several such splits in a
// row the code grows exponentially. The partitioner decides where to cut.
//
// Worked example, the seed's graph (spec/emitters.md section 4):
//
//   ENTRY fused {                                      param
//     %param = f32[20,20] parameter(0)                   |
//     %log = f32[20,20] log(%param)                     log -----.
//     %transpose = f32[20,20] transpose(%log),           |       |
//         dimensions={1,0}                               |   transpose
//     ROOT %add = f32[20,20] add(%log, %transpose)       |       |
//   }                                                   add -----'
//
//   partitionComputation(*fused, &context)->toString():
//
//   partition of %fused: 2 functions
//   function @fused_log returns %log
//     why: %log is read at (d0, d1) -> (d1, d0) by %transpose and at
//          (d0, d1) -> (d0, d1) by %add
//     ROOT %log = log(%param)  at (d0, d1) -> (d0, d1), domain: d0 in
//          [0, 19], d1 in [0, 19]
//   function @fused_add returns %add
//     why: root of the computation
//     %transpose = transpose(@fused_log)  at (d0, d1) -> (d0, d1), domain:
//          d0 in [0, 19], d1 in [0, 19]
//     ROOT %add = add(@fused_log, %transpose)  at (d0, d1) -> (d0, d1),
//          domain: d0 in [0, 19], d1 in [0, 19]
//
// (wrapped here; each entry is one line). `@fused_log` in an operand list is
// a call of that function; each instruction shows its map from the root.
// `%add` reads `%log` at (d0, d1) directly and at (d1, d0) through the
// transpose, so `%log` is cut. `%transpose` has one user and is read at one
// index, so it goes with `%add`: two functions. The seed says "three
// functions, one instruction each" (and the same for add(slice(x), pad(x))),
// but XLA's code gives two (its test PartiallyMergable is this graph), and
// for add(slice(x), pad(x)) puts slice, pad and add into one function with x
// cut. tessel does what XLA does. Read through two transposes instead, `%log`
// would be read at (d0, d1) on both paths and join: one function.
//
// The rules. Instructions are visited from the ROOT backwards (reverse
// definition order, so every user is decided before its operands); each
// subgraph keeps, for each of its instructions, the map from its root's
// index to the instruction's index (`Subgraph::maps`).
//
//   1. Parameters belong to no subgraph: functions read them from the
//      parameter tensors.
//   2. The ROOT starts a subgraph (unless it is a parameter). A ROOT
//      `tuple` belongs to none; each distinct operand of it that is not a
//      parameter starts one (one function per output).
//   3. Constants are cheap: a constant is never cut but emitted in every
//      subgraph that reads it (so it can be in several), unless rule 2 or
//      4 or the caller's `isSubgraphRoot` makes it a root.
//   4. An instruction without users starts a subgraph (dead code; nothing
//      calls it).
//   5. Otherwise an instruction I joins its users' subgraph S iff all its
//      users are in S and every path reads I at the same index: for each
//      user U and each operand slot k with U->operand(k) == I, compose (the
//      map from S's root to U) with (U's output-to-input map for slot k) and
//      simplify; all must be one and the same map. Known-empty maps read
//      nothing and are left out (a slice that skips one operand of a
//      concatenate); a slot with more than one map, or a user without maps
//      (sort, gather, custom-call, ...), counts as different.
//   6. Else I starts a subgraph, with a `reason` naming the users and the
//      maps (or subgraphs) that differ. Also when S already has
//      `maxInstructionsPerSubgraph` instructions, or when the caller's
//      `isSubgraphRoot` says so.
//
// A tuple-shaped instruction that is not a tuple (a variadic reduce) is
// indexed by output 0: its outputs share one index space. An internal
// `tuple` (not the ROOT) and a tuple-shaped operand of the ROOT tuple
// (nested tuple outputs) are refused with an error; XLA does not support
// them either.
//
// What XLA does (xla/codegen/emitters/computation_partitioner.cc and its
// test; earlier versions lived in xla/service/gpu/fusions/mlir) and where
// tessel differs:
//
//   - Same: the reverse post-order walk; an instruction is a root when the
//     caller says so, when its users lie in other than exactly one subgraph
//     (no users included), or when more than one distinct non-empty
//     composed map reaches it; a root's own map is the identity; subgraphs
//     are capped at 2000 instructions (kMaxHloOpsPerSubgraph); names are
//     "<computation>_<root>" sanitized.
//   - Parameters: XLA puts them into subgraphs; a parameter read at two
//     indices becomes a function of its own marked `no_compute`. tessel
//     leaves them out (rule 1): they are tensors every function receives.
//   - ROOT tuple: XLA makes the tuple the root of one function that returns
//     every output, with the operands inside it when they are read at one
//     index. tessel gives each output its own function (rule 2), so
//     `roots` always has exactly one entry here; a caller that wants XLA's
//     shape calls the output functions from one entry loop.
//   - Constants: XLA has no special case (a constant read from two
//     functions becomes a function of its own); tessel duplicates them.
//   - A slot read through several maps: XLA composes only the first map of
//     the slot; tessel cuts, which is never wrong.
//   - Ops without maps: XLA gives tuple, scatter and parameter operands the
//     identity and has gather maps; tessel has no gather/scatter maps yet
//     and cuts their operands. Earlier XLA versions also cut at every
//     concatenate and at gather index operands; the current one relies on
//     the maps alone (a concatenate reading I twice gives two maps).
//   - The cap counts instructions other than constants.
//   - Subgraphs are listed callees first (XLA lists the ROOT's first).
//
// This is an analysis on tessel's HLO IR; it emits no MLIR. One computation
// at a time: called computations (a reduce's reducer) are partitioned on
// their own.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_COMPUTATIONPARTITIONER_H
#define TESSEL_CODEGEN_COMPUTATIONPARTITIONER_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Support/Expected.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tessel {

/// One function of a partitioned computation.
struct Subgraph {
  /// Unique within the partition and a valid MLIR symbol name:
  /// "<computation>_<root>" with every character other than [A-Za-z0-9_]
  /// replaced by '_' (a '_' in front of a leading digit; "_1", "_2", ...
  /// appended when two names collide).
  std::string name;
  /// The subgraph's instructions in the computation's order (operands
  /// before users). Never parameters or the ROOT tuple.
  std::vector<const HloInstruction *> instructions;
  /// The instruction whose value the function returns: exactly one here
  /// (XLA's may have several, see the ROOT tuple above).
  std::vector<const HloInstruction *> roots;
  /// One line: why the root is a function root, e.g. "root of the
  /// computation" or "%log is read at (d0, d1) -> (d0, d1) by %add and at
  /// (d0, d1) -> (d1, d0) by %transpose".
  std::string reason;
  /// Parallel to `instructions`: the distinct simplified maps from the
  /// root's index (the function's index arguments) to the instruction's
  /// index. Exactly one, except that a constant read at several indices has
  /// several, and an instruction that no path reads (all its reads known
  /// empty) has none. The root's map is the identity on its shape (output 0
  /// of a tuple shape).
  std::vector<std::vector<IndexingMap>> maps;

  bool contains(const HloInstruction &instruction) const;
  /// The maps of `instruction`, nullptr when it is not in this subgraph.
  const std::vector<IndexingMap> *
  mapsOf(const HloInstruction &instruction) const;
};

/// How to partition.
struct PartitionOptions {
  /// Instructions that must be function roots whatever their users (XLA:
  /// a transpose or reduction hero and its operands, which the entry
  /// function reads and writes through shared memory). Unset: none.
  std::function<bool(const HloInstruction &)> isSubgraphRoot;
  /// The `reason` of the roots `isSubgraphRoot` makes; empty: "a root by
  /// the caller's choice".
  std::string rootReason;
  /// At most this many instructions per subgraph, constants not counted;
  /// an instruction that would join a full subgraph starts a new one. 0 or
  /// less: no limit. XLA's limit is 2000.
  int64_t maxInstructionsPerSubgraph = 2000;
};

struct PartitionedComputation {
  const HloComputation *computation = nullptr;
  /// Callees before callers: a subgraph comes after every subgraph whose
  /// root it reads.
  std::vector<Subgraph> subgraphs;
  /// Per instruction (by HloInstruction::index()), the position in
  /// `subgraphs` of the subgraph that computes it, or -1 (parameters, the
  /// ROOT tuple, constants that are not roots).
  std::vector<int64_t> subgraphIndex;

  /// The subgraph that computes `instruction`; nullptr for parameters (read
  /// from the parameter tensors) and a ROOT tuple, and for a constant that
  /// is not a root (it is emitted inline in every subgraph that reads it:
  /// ask Subgraph::contains), and for an instruction of another computation.
  const Subgraph *subgraphOf(const HloInstruction &instruction) const;
  /// The subgraph of the computation's ROOT; nullptr for a ROOT tuple or
  /// parameter.
  const Subgraph *rootSubgraph() const;
  /// Human-readable listing for `tessel compile --emit=partition`: per
  /// function its name, root, why it was cut, and its instructions with
  /// their maps (the example at the top of this file).
  std::string toString() const;
};

/// Partitions `computation` by the rules above. Fails, with the position
/// of the instruction, on an internal tuple, on a nested tuple output, and
/// on a computation without instructions.
/// @post every instruction but parameters and the ROOT tuple is in exactly
///       one subgraph, except constants that are not roots (in every
///       subgraph of their users); every operand an instruction reads from
///       another subgraph is that subgraph's root, and that subgraph comes
///       earlier in `subgraphs`. (Property-tested over the jax corpus.)
Expected<PartitionedComputation>
partitionComputation(const HloComputation &computation,
                     mlir::MLIRContext *context,
                     const PartitionOptions &options = {});

} // namespace tessel

#endif // TESSEL_CODEGEN_COMPUTATIONPARTITIONER_H
