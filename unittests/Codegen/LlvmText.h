//===- LlvmText.h - LLVM IR text through a transform, for tests -*- C++ -*-===//
//
// The tests of tessel's LLVM-level helpers (loop hints, streaming copies,
// prefetches) write a module as LLVM IR text, run a helper on it and look
// at the text printed back.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_CODEGEN_LLVMTEXT_H
#define TESSEL_UNITTESTS_CODEGEN_LLVMTEXT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessel {

/// `text` parsed as LLVM IR, changed by `transform`, printed back; `result`
/// is what `transform` returned. Empty, with a test failure, when `text`
/// does not parse.
inline std::string
transformLlvmText(const std::string &text,
                  llvm::function_ref<int(llvm::Module &)> transform,
                  int &result) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, diagnostic, context);
  EXPECT_TRUE(module) << diagnostic.getMessage().str();
  if (!module)
    return "";
  result = transform(*module);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os, nullptr);
  return printed;
}

} // namespace tessel

#endif // TESSEL_UNITTESTS_CODEGEN_LLVMTEXT_H
