//===- PipelinePassOptions.h - a pipeline that takes a pass's options -*- C++ -*-===//
//
// A pipeline whose option string holds its own options and those of one of
// its passes, e.g. `tx-to-cpu{threads=2 gemm-tile=4,4,4}`: `threads` is the
// pipeline's, `gemm-tile` is tx-cpu-tile-and-vectorize's, declared once in
// that pass's .td and parsed by the pass itself. A new option of the pass
// is an option of the pipeline with no edit in the pipeline.
//
// Header-only, like ModulePipeline.h.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H
#define TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H

#include "TxDialect/Pipelines/ModulePipeline.h"

#include "llvm/ADT/StringExtras.h"

#include <functional>
#include <string>

namespace mlir::tx {

/// The options of a pipeline that also forwards the options of one of its
/// passes: `Derived` declares the pipeline's own options as
/// PassPipelineOptions does.
template <typename Derived>
struct PipelineOptionsWithPass : public PassPipelineOptions<Derived> {
  /// Whether `key` names one of the pipeline's own options.
  bool isOwnOption(StringRef key) const {
    return this->OptionsMap.contains(key);
  }
};

/// An option string split into the entries the pipeline parses and those
/// its pass parses, each entry's text unchanged.
struct SplitPipelineOptions {
  std::string own;
  std::string pass;
};

/// Splits `options` (entries `key`, `key=value` separated by white space; a
/// value may hold white space inside quotes or braces, as in upstream's
/// option syntax) by whether `isOwn` accepts an entry's key.
inline SplitPipelineOptions
splitPipelineOptions(StringRef options,
                     function_ref<bool(StringRef key)> isOwn) {
  SplitPipelineOptions split;
  size_t i = 0, e = options.size();
  while (i < e) {
    if (llvm::isSpace(options[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    char quote = 0;
    int depth = 0;
    for (; i < e; ++i) {
      char c = options[i];
      if (quote) {
        if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      } else if (depth <= 0 && llvm::isSpace(c)) {
        break;
      }
    }
    StringRef entry = options.slice(start, i);
    std::string &to = isOwn(entry.split('=').first) ? split.own : split.pass;
    if (!to.empty())
      to += ' ';
    to += entry.str();
  }
  return split;
}

/// Registers a pipeline of module passes whose options are `Options` (the
/// pipeline's own) plus those of one of its passes: `build(pm, options,
/// passOptions, errorHandler)` gets the parsed own options and the text of
/// the other entries, which it gives to that pass's `initializeOptions`.
/// `--help` lists the pipeline's own options; `description` should name
/// the pass whose options it also takes.
template <typename Options>
void registerModulePipelineWithPass(
    StringRef arg, StringRef description,
    std::function<LogicalResult(OpPassManager &, const Options &,
                                StringRef passOptions,
                                function_ref<LogicalResult(const Twine &)>)>
        build) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, build](OpPassManager &pm, StringRef optionsStr,
                    function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        if (failed(checkModulePipelineAnchor(pm, name, errorHandler)))
          return failure();
        Options options;
        SplitPipelineOptions split = splitPipelineOptions(
            optionsStr, [&](StringRef key) { return options.isOwnOption(key); });
        if (failed(options.parseFromString(split.own)))
          return failure();
        return build(pm, options, split.pass, errorHandler);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

} // namespace mlir::tx

#endif // TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H
