//===- FusionPasses.td - stacked-linear fusion passes ------*- tablegen -*-===//
//
// Stacked-linear fusion (QKV, MLA, GLU, merged-column) and the export of the
// stacking maps a weight loader needs. (The test pass printing the analysis
// the fusers decide on is in test/lib.)
//
//===----------------------------------------------------------------------===//

#ifndef TX_FUSION_PASSES_TD
#define TX_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TxFuseStackedLinears : Pass<"tx-fuse-stacked-linears", "::mlir::ModuleOp"> {
  let summary = "Merges projections of one input into one wide projection (QKV, MLA, GLU, merged-column)";
  let description = [{
    Projections (`tx.linear`) that read the same input become one projection
    of a merged layer whose weights are the originals stacked along the
    output dimension; each original result becomes a `tx.slice` of the
    merged output. The fusers run in the order given by `fusers`, each
    offered the calls the earlier ones left alone:

    * `qkv`: the `q`, `k` and (when called) `v` projections, matched by name
      (`q-pattern`, ...), stacked as q, k, v; GQA widths are fine;
    * `mla`: `q_a_proj` + `kv_a_proj_with_mqa`, or `q_proj` +
      `kv_a_proj_with_mqa` without q-LoRA;
    * `glu`: `gate` and `up` whose results feed `act(gate) * up` (the
      activation is kept);
    * `merged-column`: any remaining projections of one input.

    A group is fused only when every layer is called once and otherwise only
    tested by foldable existence guards (folded to "exists"), the calls'
    nearest common dominator block gives an insertion point that no call
    sits in a loop below and from which some call always runs (the merged
    projection never runs where the program calls none of the layers: each
    under a condition is refused, one in each branch of an `if` with an else
    is not), the input is available there, no two layers load the same
    checkpoint tensors (tied weights), and nothing that runs between the
    insertion point and the last call may write memory that may alias the
    input (upstream alias analysis with the tx type facts).
    Every refused group gets a remark at the op that failed the check, every
    fused group a remark naming what was merged.

    The merged layer carries the stacking map (checkpoint prefix, row
    offset, rows, heads of every original), whichever fuser merges it (k and
    v left to merged-column keep their heads). Heads come from a `heads`
    attribute on the layer; else, for the q/k/v roles, from
    `q-heads`/`kv-heads`, else from a `tx.view` of the result to
    (..., H, D) with H * D rows, else they are recorded as unknown
    (`unknown_heads`, which `tx-export-stacking-maps` refuses to shard);
    MLA's `q_a`/`kv_a` down-projections are one latent head (replicated on
    every rank, as vLLM replicates them); other parts are not
    head-structured (0). Under the module's `tp_size` > 1 a group with a
    part of unknown heads is refused with a remark, as is (at any size) a
    part whose heads do not divide its rows or whose rows would overflow.
  }];
  let dependentDialects = ["::mlir::tx::TxDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    ListOption<"fusers", "fusers", "std::string",
               "Fusers to run, in order (qkv, mla, glu, merged-column)">,
    Option<"qPattern", "q-pattern", "std::string", "\"q_proj\"",
           "Name suffix of query projections">,
    Option<"kPattern", "k-pattern", "std::string", "\"k_proj\"",
           "Name suffix of key projections">,
    Option<"vPattern", "v-pattern", "std::string", "\"v_proj\"",
           "Name suffix of value projections">,
    Option<"gatePattern", "gate-pattern", "std::string", "\"gate_proj\"",
           "Name suffix of GLU gate projections">,
    Option<"upPattern", "up-pattern", "std::string", "\"up_proj\"",
           "Name suffix of GLU up projections">,
    Option<"qaPattern", "q-a-pattern", "std::string", "\"q_a_proj\"",
           "Name suffix of MLA query down-projections (q-LoRA)">,
    Option<"kvaPattern", "kv-a-pattern", "std::string",
           "\"kv_a_proj_with_mqa\"",
           "Name suffix of MLA key/value down-projections">,
    Option<"qHeads", "q-heads", "int64_t", "0",
           "Query heads of q projections without a `heads` attribute "
           "(stacking map), 0 when not given">,
    Option<"kvHeads", "kv-heads", "int64_t", "0",
           "Key/value heads of k/v projections without a `heads` attribute "
           "(stacking map), 0 when not given">,
    Option<"testSkipInputStability", "test-skip-input-stability", "bool",
           "false",
           "Testing only, UNSAFE: skip the input-stability check, so that "
           "the differential tests can show they catch a broken rewrite">,
    ListOption<"testDisableChecks", "test-disable-checks", "std::string",
           "Testing only, UNSAFE: soundness checks to switch off, so that "
           "the differential tests can show each catches wrong rewrites: "
           "input-identity (group inputs that merely must-alias), "
           "cfg-loops (only loop ops are loops), region-op-effects (ops "
           "with regions: own writes ignored), input-stability, speculation "
           "(merge calls none of which runs on every path)">
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Candidate groups found">,
    Statistic<"numFused", "fused", "Groups fused">,
    Statistic<"numRefusedGuard", "refused-guard",
              "Refused: a layer compared with ==/!= None">,
    Statistic<"numRefusedEscape", "refused-escape",
              "Refused: a layer reference escapes">,
    Statistic<"numRefusedCalledTwice", "refused-called-twice",
              "Refused: a layer called more than once">,
    Statistic<"numRefusedOtherUse", "refused-other-use",
              "Refused: a layer used by another op">,
    Statistic<"numRefusedUnstructured", "refused-unstructured",
              "Refused: calls in different blocks of a CFG region">,
    Statistic<"numRefusedLoop", "refused-loop",
              "Refused: a call inside a loop the merged projection would leave">,
    Statistic<"numRefusedDominance", "refused-dominance",
              "Refused: the input is not available at the insertion point">,
    Statistic<"numRefusedInputWritten", "refused-input-written",
              "Refused: the input may be written before the last call">,
    Statistic<"numRefusedSpeculative", "refused-speculative",
              "Refused: no call runs on every path from the insertion point">,
    Statistic<"numRefusedTiedCheckpoint", "refused-tied-checkpoint",
              "Refused: two layers load the same checkpoint tensors">
  ];
}

def TxExportStackingMaps : Pass<"tx-export-stacking-maps", "::mlir::ModuleOp"> {
  let summary = "Writes the stacking maps of merged layers as JSON for a weight loader";
  let description = [{
    For every `tx.layer` with a stacking map: the row range of each original
    checkpoint tensor (`<prefix>.weight`, and `<prefix>.bias` when the layer
    has a bias) in the merged tensor, and for `tp-size` N the rows of every
    original that make up each rank's merged shard (KV heads replicated when
    there are fewer than N). A head is never split: rows or heads that do
    not divide over N, heads that do not replicate evenly, a part of
    unknown heads with N > 1, and N outside [1, 65536] are errors and
    nothing is written. The IR is unchanged.
  }];
  let options = [
    Option<"tpSize", "tp-size", "int64_t", "1", "Tensor-parallel size">,
    Option<"output", "output", "std::string", "\"-\"",
           "File to write (\"-\": stdout)">
  ];
}

#endif // TX_FUSION_PASSES_TD
