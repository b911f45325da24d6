//===- PipelinePassOptions.h - a pipeline that takes its passes' options -*- C++ -*-===//
//
// A pipeline whose option string holds its own options and those of some of
// its passes, e.g. `tx-to-cpu{threads=2 gemm-tile=4,4,4}`: `threads` is the
// pipeline's, `gemm-tile` is tx-cpu-tile-and-vectorize's, declared once in
// that pass's .td and parsed by the pass itself. A new option of such a
// pass is an option of the pipeline with no edit in the pipeline.
//
// An entry goes to the pipeline when the pipeline declares its key (the
// pipeline's option wins over a pass option of the same name: the pipeline
// presets that pass from it, as tx-to-nvvm does `chip`), else to the first
// of its passes, in the order the pipeline lists them, that declares it; a
// key nobody declares is an error naming the pipeline and the key.
//
// Header-only, like ModulePipeline.h.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H
#define TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H

#include "TxDialect/Pipelines/ModulePipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>
#include <memory>
#include <string>

namespace mlir::tx {

/// The options of a pipeline that also forwards the options of some of its
/// passes: `Derived` declares the pipeline's own options as
/// PassPipelineOptions does.
template <typename Derived>
struct PipelineOptionsWithPass : public PassPipelineOptions<Derived> {
  /// Whether `key` names one of the pipeline's own options.
  bool isOwnOption(StringRef key) const {
    return this->OptionsMap.contains(key);
  }
};

/// Calls `entry` on each entry of an option string (`key` or `key=value`,
/// separated by white space; a value may hold white space inside quotes or
/// braces, as in upstream's option syntax), its text unchanged.
inline void forEachOptionEntry(StringRef options,
                               function_ref<void(StringRef entry)> entry) {
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
    entry(options.slice(start, i));
  }
}

/// The key of an option entry `key=value` or `key`.
inline StringRef optionEntryKey(StringRef entry) {
  return entry.split('=').first;
}

/// The passes whose options a pipeline takes, in the order their options are
/// looked up.
using PipelinePasses = SmallVector<std::unique_ptr<Pass>>;

/// What `pass` makes of the option entry `entry` (`key=value`); it parses it
/// when it takes it.
enum class PassOptionEntry { Taken, UnknownKey, BadValue };
inline PassOptionEntry parsePassOptionEntry(Pass &pass, StringRef entry) {
  // PassOptions::parseFromString reports a key the pass does not declare on
  // the stream it hands to the error handler; llvm::cl reports a bad value
  // for a key it declares itself (on stderr), that stream left empty.
  std::string unknownKey;
  if (succeeded(pass.initializeOptions(entry, [&](const Twine &message) {
        unknownKey = message.str();
        return failure();
      })))
    return PassOptionEntry::Taken;
  return unknownKey.empty() ? PassOptionEntry::BadValue
                            : PassOptionEntry::UnknownKey;
}

/// Gives each entry of `options` that `isOwn` does not accept to the first
/// pass of `passes` that declares its key, parsed by that pass's
/// initializeOptions over the values it was created with (`probes`: other
/// instances of the same passes, which find the pass that declares a key
/// by parsing the entry). A key no pass declares, or a bad value, is an
/// error through `errorHandler` naming `pipeline`, the key and the passes.
inline LogicalResult
forwardPipelineOptions(StringRef pipeline, StringRef options,
                       function_ref<bool(StringRef key)> isOwn,
                       PipelinePasses &passes, PipelinePasses probes,
                       function_ref<LogicalResult(const Twine &)> errorHandler) {
  SmallVector<std::string> forwarded(passes.size());
  std::string error;
  forEachOptionEntry(options, [&](StringRef entry) {
    StringRef key = optionEntryKey(entry);
    if (isOwn(key) || !error.empty())
      return;
    for (auto [probe, text] : llvm::zip_equal(probes, forwarded)) {
      switch (parsePassOptionEntry(*probe, entry)) {
      case PassOptionEntry::UnknownKey:
        continue;
      case PassOptionEntry::BadValue:
        error = (Twine(pipeline) + ": bad value in '" + entry +
                 "', an option of " + probe->getArgument())
                    .str();
        return;
      case PassOptionEntry::Taken:
        if (!text.empty())
          text += ' ';
        text += entry.str();
        return;
      }
    }
    std::string passNames;
    for (const std::unique_ptr<Pass> &pass : passes)
      passNames += (passNames.empty() ? "" : ", ") + pass->getArgument().str();
    error = (Twine(pipeline) + " has no option '" + key +
             "' (its options are its own and those of " + passNames + ")")
                .str();
  });
  if (!error.empty())
    return errorHandler(error);
  for (auto [pass, text] : llvm::zip_equal(passes, forwarded))
    if (failed(pass->initializeOptions(text, errorHandler)))
      return failure();
  return success();
}

/// The own options of `options`: the entries `isOwn` accepts, unchanged.
inline std::string ownPipelineOptions(StringRef options,
                                      function_ref<bool(StringRef key)> isOwn) {
  std::string own;
  forEachOptionEntry(options, [&](StringRef entry) {
    if (!isOwn(optionEntryKey(entry)))
      return;
    if (!own.empty())
      own += ' ';
    own += entry.str();
  });
  return own;
}

/// Registers a pipeline of module passes whose options are `Options` (the
/// pipeline's own) plus those of the passes `createPasses(options)` makes
/// (with the values the pipeline presets from its own options): the text
/// `arg{...}` is parsed into the own options, then the other entries into
/// the passes that declare them, and `build(pm, options, passes)` adds those
/// passes and the pipeline's others. `--help` lists the pipeline's own
/// options; `description` should name the passes whose options it also
/// takes.
template <typename Options>
void registerModulePipelineWithPasses(
    StringRef arg, StringRef description,
    std::function<PipelinePasses(const Options &)> createPasses,
    std::function<void(OpPassManager &, const Options &, PipelinePasses)>
        build) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, createPasses,
       build](OpPassManager &pm, StringRef optionsStr,
              function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        if (failed(checkModulePipelineAnchor(pm, name, errorHandler)))
          return failure();
        Options options;
        auto isOwn = [&](StringRef key) { return options.isOwnOption(key); };
        if (failed(options.parseFromString(
                ownPipelineOptions(optionsStr, isOwn))))
          return failure();
        PipelinePasses passes = createPasses(options);
        if (failed(forwardPipelineOptions(name, optionsStr, isOwn, passes,
                                          createPasses(options),
                                          errorHandler)))
          return failure();
        build(pm, options, std::move(passes));
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

} // namespace mlir::tx

#endif // TXDIALECT_PIPELINES_PIPELINEPASSOPTIONS_H
