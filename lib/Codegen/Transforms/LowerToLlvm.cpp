//===- LowerToLlvm.cpp - -tessel-lower-to-llvm ----------------------------===//
//
// The last pass: everything to the llvm dialect, in four steps.
//
//   1. f32 transcendentals (tanh, exp, log, erf, ...) become MLIR's
//      polynomial approximations (f32 exp on the CPU tessel's own,
//      ExpApproximation.h): branch-free, so LLVM vectorizes them
//      (bf16/f16 compute in f32 already); bf16 <-> f32 conversions expand
//      to integer code (Bf16Rounding.h: the evaluator's rounding bit for
//      bit), which every x86 CPU runs and LLVM vectorizes; floor/ceil
//      division by constants
//      expands to arith.
//   0. sin, cos, cbrt, atan and atan2 become calls to the C library
//      (MLIR's approximations of them are wrong for large and infinite
//      arguments and signed zeros).
//   2. What is left that LLVM has no intrinsic for (f64 tanh, erf, tan,
//      atan2, log1p, expm1) becomes calls to the C library.
//   3. scf becomes cf.
//   4. arith, math, func and cf become llvm; index is i64; c64/c128
//      values (complex.create, re, im) are structs of two f32/f64.
//
// A module of GPU kernels (`tessel.gpu_kernel`) has no C library:
// steps 0 and 2 call CUDA's libdevice instead (`__nv_sinf`, `__nv_tanh`,
// ...; the PTX compiler links it in), exp, log and pow too, since LLVM's
// NVPTX backend has no instruction for them, and remf (`__nv_fmodf`), which
// it expands inexactly, and complex abs and sign's hypotf/hypot
// (`__nv_hypotf`, `__nv_hypot`). Any other math op that is not
// a plain PTX instruction is refused with its name and type, and so are
// the complex functions of the CPU's runtime (ComplexRuntime.h), at the
// instruction's line. nvvm ops stay
// (the LLVM IR translation knows them), and each kernel's llvm.func gets
// `nvvm.kernel`, `nvvm.maxntid` (its block size) and `noalias` pointers.
//
//===----------------------------------------------------------------------===//
#include "../ComplexRuntime.h"
#include "Bf16Rounding.h"
#include "ExpApproximation.h"
#include "SplatConstant.h"
#include "tessel/Codegen/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ComplexToLLVM/ComplexToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel {
namespace {

/// Calls to the C library for the ops `Ops` (those of every type: f32
/// ones become sinf, ... and f64 ones sin, ...).
template <typename... Ops>
mlir::LogicalResult lowerToLibm(mlir::ModuleOp module) {
  mlir::ConversionTarget target(*module.getContext());
  target.markUnknownOpDynamicallyLegal([](mlir::Operation *) { return true; });
  target.addIllegalOp<Ops...>();
  mlir::RewritePatternSet patterns(module.getContext());
  mlir::populateMathToLibmConversionPatterns(patterns);
  return mlir::applyPartialConversion(module, target, std::move(patterns));
}

/// A scalar f32/f64 math op as a call of libdevice's function of that
/// type, declared in the module on first use.
template <typename Op> struct LibdeviceCall : mlir::OpRewritePattern<Op> {
  LibdeviceCall(mlir::MLIRContext *context, llvm::StringRef f32Name,
                llvm::StringRef f64Name)
      : mlir::OpRewritePattern<Op>(context), f32Name(f32Name),
        f64Name(f64Name) {}
  mlir::LogicalResult
  matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    mlir::Type type = op->getResult(0).getType();
    llvm::StringRef name;
    if (type.isF32())
      name = f32Name;
    else if (type.isF64())
      name = f64Name;
    if (name.empty())
      return rewriter.notifyMatchFailure(op, "not a scalar f32 or f64");
    auto module = op->template getParentOfType<mlir::ModuleOp>();
    if (!module.lookupSymbol(name)) {
      mlir::OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      llvm::SmallVector<mlir::Type> inputs(op->getNumOperands(), type);
      auto decl = rewriter.create<mlir::func::FuncOp>(
          op.getLoc(), name, rewriter.getFunctionType(inputs, {type}));
      decl.setPrivate();
    }
    rewriter.replaceOpWithNewOp<mlir::func::CallOp>(op, name, type,
                                                    op->getOperands());
    return mlir::success();
  }
  std::string f32Name, f64Name;
};

/// libdevice's functions for the ops the CPU sends to the C library before
/// the approximations (step 0).
void populateLibdeviceEarlyPatterns(mlir::RewritePatternSet &patterns) {
  mlir::MLIRContext *context = patterns.getContext();
  patterns.add<LibdeviceCall<mlir::math::SinOp>>(context, "__nv_sinf",
                                                 "__nv_sin");
  patterns.add<LibdeviceCall<mlir::math::CosOp>>(context, "__nv_cosf",
                                                 "__nv_cos");
  patterns.add<LibdeviceCall<mlir::math::CbrtOp>>(context, "__nv_cbrtf",
                                                  "__nv_cbrt");
  patterns.add<LibdeviceCall<mlir::math::AtanOp>>(context, "__nv_atanf",
                                                  "__nv_atan");
  patterns.add<LibdeviceCall<mlir::math::Atan2Op>>(context, "__nv_atan2f",
                                                   "__nv_atan2");
}

/// libdevice's functions for what the approximations left (step 2).
void populateLibdeviceLatePatterns(mlir::RewritePatternSet &patterns) {
  mlir::MLIRContext *context = patterns.getContext();
  populateLibdeviceEarlyPatterns(patterns);
  patterns.add<LibdeviceCall<mlir::math::TanhOp>>(context, "__nv_tanhf",
                                                  "__nv_tanh");
  patterns.add<LibdeviceCall<mlir::math::ErfOp>>(context, "__nv_erff",
                                                 "__nv_erf");
  patterns.add<LibdeviceCall<mlir::math::TanOp>>(context, "__nv_tanf",
                                                 "__nv_tan");
  patterns.add<LibdeviceCall<mlir::math::Log1pOp>>(context, "__nv_log1pf",
                                                   "__nv_log1p");
  patterns.add<LibdeviceCall<mlir::math::ExpM1Op>>(context, "__nv_expm1f",
                                                   "__nv_expm1");
  patterns.add<LibdeviceCall<mlir::math::ExpOp>>(context, "__nv_expf",
                                                 "__nv_exp");
  patterns.add<LibdeviceCall<mlir::math::LogOp>>(context, "__nv_logf",
                                                 "__nv_log");
  patterns.add<LibdeviceCall<mlir::math::PowFOp>>(context, "__nv_powf",
                                                  "__nv_pow");
  // NVPTX expands frem as x - trunc(x / y) * y, which is wrong once x / y
  // is inexact or overflows (fmod(0.1, 1e-40) came out -inf on an H200);
  // libdevice's fmod is exact, as the C library's is.
  patterns.add<LibdeviceCall<mlir::arith::RemFOp>>(context, "__nv_fmodf",
                                                   "__nv_fmod");
}

/// The C library's hypotf and hypot (complex abs and sign call them,
/// ScalarOpsComplex.cpp) as libdevice's.
void useLibdeviceHypot(mlir::ModuleOp module) {
  for (auto [from, to] :
       {std::pair<llvm::StringRef, llvm::StringRef>{"hypotf", "__nv_hypotf"},
        {"hypot", "__nv_hypot"}}) {
    auto func = module.lookupSymbol<mlir::func::FuncOp>(from);
    if (!func)
      continue;
    if (mlir::failed(mlir::SymbolTable::replaceAllSymbolUses(
            func, mlir::StringAttr::get(module.getContext(), to), module)))
      continue;
    func.setName(to);
  }
}

/// Integer maximum and minimum on the GPU as a compare and a select in PTX
/// (inline assembly, so that LLVM does not fold them back into max.s32).
/// ptxas of CUDA 13.0 for sm_90 miscompiles a chain of max.s32 whose
/// operands are negated (`max(max(acc, -x), -y)` becomes a three-input
/// VIMNMX3 that drops one negation: an s32 column reduction of negated
/// values came out wrong on an H200, at ptxas -O1 to -O3 and through the
/// driver's JIT); setp + selp is computed right at every level.
template <typename Op>
struct IntegerMinMaxAsSelect : mlir::OpRewritePattern<Op> {
  IntegerMinMaxAsSelect(mlir::MLIRContext *context, llvm::StringRef compare)
      : mlir::OpRewritePattern<Op>(context), compare(compare) {}
  mlir::LogicalResult
  matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    auto type = llvm::dyn_cast<mlir::IntegerType>(op.getType());
    if (!type || (type.getWidth() != 16 && type.getWidth() != 32 &&
                  type.getWidth() != 64))
      return rewriter.notifyMatchFailure(op, "not a scalar i16, i32 or i64");
    unsigned bits = type.getWidth();
    std::string width = std::to_string(bits);
    // PTX constraint letters: h for 16-bit, r for 32-bit, l for 64-bit
    // registers.
    const char *reg = bits == 16 ? "h" : bits == 32 ? "r" : "l";
    std::string text = "{ .reg .pred p; setp." + compare + width +
                       " p, $1, $2; selp.b" + width + " $0, $1, $2, p; }";
    std::string constraints = std::string("=") + reg + "," + reg + "," + reg;
    rewriter.replaceOpWithNewOp<mlir::LLVM::InlineAsmOp>(
        op, type, mlir::ValueRange{op.getLhs(), op.getRhs()}, text, constraints,
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
    return mlir::success();
  }
  std::string compare;
};

/// Float negation on the GPU as an integer xor of the sign bit (inline
/// assembly, so that LLVM does not fold it back into fneg). PTX's neg.f32
/// gives "an unspecified NaN" for a NaN and ptxas writes it as an add of
/// -0, which makes the canonical NaN: the sign of a NaN was lost, so a
/// total-order sort of negated values put it at the other end (an H100,
/// SortEmitterTest.SortsInsideCalls). A bf16 or f16 negation, which the
/// elemental emitter writes as truncf(negf(extf x)), is flipped in its own
/// width, so that the native rounding back (which makes the canonical NaN)
/// never sees it. Negation changes only the sign bit, NaN or not, as the
/// evaluator and the CPU do.
struct NegateAsSignFlip : mlir::OpRewritePattern<mlir::arith::NegFOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::arith::NegFOp op,
                  mlir::PatternRewriter &rewriter) const override {
    auto type = llvm::dyn_cast<mlir::FloatType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a scalar float");
    // truncf(negf(extf x)) with x and the result of one 16-bit type: flip
    // x's sign and replace the truncf.
    mlir::Value operand = op.getOperand();
    mlir::Operation *replaced = op;
    if (auto ext = operand.getDefiningOp<mlir::arith::ExtFOp>();
        ext && op->hasOneUse()) {
      auto trunc = llvm::dyn_cast<mlir::arith::TruncFOp>(*op->user_begin());
      if (trunc && trunc.getType() == ext.getIn().getType()) {
        operand = ext.getIn();
        replaced = trunc;
        type = llvm::cast<mlir::FloatType>(trunc.getType());
      }
    }
    unsigned bits = type.getWidth();
    if (bits != 16 && bits != 32 && bits != 64)
      return rewriter.notifyMatchFailure(op, "not 16, 32 or 64 bits");
    mlir::Location loc = op.getLoc();
    auto integer = rewriter.getIntegerType(bits);
    mlir::Value x =
        rewriter.create<mlir::arith::BitcastOp>(loc, integer, operand);
    std::string width = std::to_string(bits);
    const char *reg = bits == 16 ? "h" : bits == 32 ? "r" : "l";
    std::string mask = bits == 16   ? "0x8000"
                       : bits == 32 ? "0x80000000"
                                    : "0x8000000000000000";
    std::string constraints = std::string("=") + reg + "," + reg;
    mlir::Value flipped =
        rewriter
            .create<mlir::LLVM::InlineAsmOp>(
                loc, integer, mlir::ValueRange{x},
                "xor.b" + width + " $0, $1, " + mask + ";", constraints,
                /*has_side_effects=*/false, /*is_align_stack=*/false,
                mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr())
            .getResult(0);
    rewriter.replaceOpWithNewOp<mlir::arith::BitcastOp>(replaced, type,
                                                        flipped);
    if (replaced != op)
      rewriter.eraseOp(op);
    return mlir::success();
  }
};

/// On the CPU, the NaN test of an f16 value widened to f32,
/// `cmpf uno|ord (extf x), (extf x)`, as an integer test of the f32 bits:
/// LLVM's InstCombine narrows the compare to one of `half` values, which
/// x86 without AVX512-FP16 scalarizes for vectors (a row max of
/// f16[4096,4096] with its partials in vectors: 13.1 ms on Zen 3 so, 2.5
/// this way). The same answer: a NaN is an exponent of all ones and a
/// mantissa not zero, whatever its width.
struct WidenedHalfNaNTest : mlir::OpRewritePattern<mlir::arith::CmpFOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::arith::CmpFOp op,
                  mlir::PatternRewriter &rewriter) const override {
    using P = mlir::arith::CmpFPredicate;
    if (op.getPredicate() != P::UNO && op.getPredicate() != P::ORD)
      return rewriter.notifyMatchFailure(op, "not a NaN test");
    auto ext = op.getLhs().getDefiningOp<mlir::arith::ExtFOp>();
    if (!ext || op.getRhs() != op.getLhs() ||
        !mlir::getElementTypeOrSelf(ext.getIn().getType()).isF16() ||
        !mlir::getElementTypeOrSelf(ext.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not of a widened f16 value");
    mlir::Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    auto vector = llvm::dyn_cast<mlir::VectorType>(op.getLhs().getType());
    mlir::Type bitsType = vector ? mlir::Type(vector.clone(i32)) : i32;
    auto constant = [&](int64_t value) -> mlir::Value {
      return splatConstant(rewriter, loc, bitsType,
                           rewriter.getIntegerAttr(i32, value));
    };
    mlir::Value bits =
        rewriter.create<mlir::arith::BitcastOp>(loc, bitsType, op.getLhs());
    mlir::Value magnitude =
        rewriter.create<mlir::arith::AndIOp>(loc, bits, constant(0x7fffffff));
    rewriter.replaceOpWithNewOp<mlir::arith::CmpIOp>(
        op,
        op.getPredicate() == P::UNO ? mlir::arith::CmpIPredicate::ugt
                                    : mlir::arith::CmpIPredicate::ule,
        magnitude, constant(0x7f800000));
    return mlir::success();
  }
};

/// On the GPU, an add, subtract or multiply of two bf16 values computed in
/// f32 and rounded to bf16 (`truncf(op(extf a, extf b))`, how the elemental
/// emitter writes a bf16 op) is the bf16 op itself: LLVM's NVPTX backend
/// emits `add.rn.bf16` / `mul.rn.bf16` (two lanes at a time where the loads
/// are vectors) from sm_90 and computes in f32 and rounds below. The bits
/// are the same: the exact result rounded once to bf16 equals it rounded to
/// f32 and then to bf16, since f32 carries at least 2 * 8 + 2 bits (double
/// rounding is innocuous for +, - and * when p' >= 2p + 2), and a NaN is
/// the GPU's canonical NaN either way. An operand may be an f32 constant
/// that bf16 holds exactly (x * 0.5).
struct NativeBf16Arithmetic : mlir::OpRewritePattern<mlir::arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  /// How operand `v` becomes bf16: the extf's input, or the value of a
  /// constant (scalar or splat) that bf16 holds exactly.
  struct Bf16Operand {
    mlir::Value value;
    std::optional<llvm::APFloat> constant;
    bool valid() const { return value || constant; }
  };

  static Bf16Operand match(mlir::Value v, mlir::Type bf16Type) {
    if (auto ext = v.getDefiningOp<mlir::arith::ExtFOp>())
      return ext.getIn().getType() == bf16Type ? Bf16Operand{ext.getIn(), {}}
                                               : Bf16Operand{};
    mlir::Attribute attr;
    if (!mlir::matchPattern(v, mlir::m_Constant(&attr)))
      return {};
    std::optional<llvm::APFloat> f;
    if (auto scalar = llvm::dyn_cast<mlir::FloatAttr>(attr))
      f = scalar.getValue();
    else if (auto splat = llvm::dyn_cast<mlir::SplatElementsAttr>(attr))
      f = splat.getSplatValue<llvm::APFloat>();
    if (!f || f->isNaN())
      return {};
    bool lost = false;
    llvm::APFloat g = *f;
    if (g.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
                  &lost) != llvm::APFloat::opOK ||
        lost)
      return {};
    return Bf16Operand{{}, g};
  }

  static mlir::Value build(const Bf16Operand &operand, mlir::Type bf16Type,
                           mlir::PatternRewriter &rewriter,
                           mlir::Location loc) {
    if (operand.value)
      return operand.value;
    if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(bf16Type))
      return rewriter.create<mlir::arith::ConstantOp>(
          loc, mlir::DenseElementsAttr::get(shaped, *operand.constant));
    return rewriter.create<mlir::arith::ConstantOp>(
        loc, mlir::FloatAttr::get(bf16Type, *operand.constant));
  }

  mlir::LogicalResult
  matchAndRewrite(mlir::arith::TruncFOp trunc,
                  mlir::PatternRewriter &rewriter) const override {
    mlir::Type type = trunc.getType();
    if (!mlir::getElementTypeOrSelf(type).isBF16() ||
        !mlir::getElementTypeOrSelf(trunc.getIn().getType()).isF32())
      return rewriter.notifyMatchFailure(trunc, "not f32 to bf16");
    mlir::Operation *op = trunc.getIn().getDefiningOp();
    if (!op || !mlir::isa<mlir::arith::AddFOp, mlir::arith::SubFOp,
                          mlir::arith::MulFOp>(op))
      return rewriter.notifyMatchFailure(trunc, "not an add, sub or mul");
    Bf16Operand x = match(op->getOperand(0), type);
    Bf16Operand y = match(op->getOperand(1), type);
    if (!x.valid() || !y.valid())
      return rewriter.notifyMatchFailure(trunc, "an operand is not bf16");
    mlir::Location loc = trunc.getLoc();
    // bf16 values are i16 in the llvm dialect (the type conversion below):
    // the op is an llvm one on bf16, between bitcasts of the bits.
    mlir::Type bits = bf16AsInteger(type);
    auto toBf16 = [&](mlir::Value v) -> mlir::Value {
      mlir::Value i = rewriter.create<mlir::arith::BitcastOp>(loc, bits, v);
      return rewriter.create<mlir::LLVM::BitcastOp>(loc, type, i);
    };
    mlir::Value a = toBf16(build(x, type, rewriter, loc));
    mlir::Value b = toBf16(build(y, type, rewriter, loc));
    mlir::Value r;
    if (mlir::isa<mlir::arith::AddFOp>(op))
      r = rewriter.create<mlir::LLVM::FAddOp>(loc, a, b);
    else if (mlir::isa<mlir::arith::SubFOp>(op))
      r = rewriter.create<mlir::LLVM::FSubOp>(loc, a, b);
    else
      r = rewriter.create<mlir::LLVM::FMulOp>(loc, a, b);
    mlir::Value i = rewriter.create<mlir::LLVM::BitcastOp>(loc, bits, r);
    rewriter.replaceOpWithNewOp<mlir::arith::BitcastOp>(trunc, type, i);
    return mlir::success();
  }
};

void populateGpuIntegerMinMaxPatterns(mlir::RewritePatternSet &patterns) {
  mlir::MLIRContext *context = patterns.getContext();
  patterns.add<IntegerMinMaxAsSelect<mlir::arith::MaxSIOp>>(context, "gt.s");
  patterns.add<IntegerMinMaxAsSelect<mlir::arith::MinSIOp>>(context, "lt.s");
  patterns.add<IntegerMinMaxAsSelect<mlir::arith::MaxUIOp>>(context, "gt.u");
  patterns.add<IntegerMinMaxAsSelect<mlir::arith::MinUIOp>>(context, "lt.u");
}

/// On the GPU, math ops that are not plain PTX instructions must have
/// become libdevice calls: any other is refused.
mlir::LogicalResult checkGpuMath(mlir::ModuleOp module) {
  mlir::WalkResult result = module.walk([](mlir::Operation *op) {
    if (auto what = op->getAttrOfType<mlir::StringAttr>(kComplexOpAttr)) {
      auto call = llvm::cast<mlir::func::CallOp>(op);
      if (call.getCallee() == kComplexUnaryFunction ||
          call.getCallee() == kComplexPowerFunction) {
        // At the instruction's line, without the op's IR.
        mlir::emitError(op->getLoc())
            << what.getValue()
            << " is not supported on the GPU (the CPU computes "
               "it with the C library's complex functions, "
               "which libdevice does not have)";
        return mlir::WalkResult::interrupt();
      }
    }
    if (llvm::isa<mlir::arith::RemFOp>(op)) {
      op->emitOpError() << "on " << op->getResult(0).getType()
                        << " is not supported on the GPU (only scalar f32 "
                           "and f64 have libdevice's fmod)";
      return mlir::WalkResult::interrupt();
    }
    if (!llvm::isa<mlir::math::MathDialect>(op->getDialect()))
      return mlir::WalkResult::advance();
    if (llvm::isa<mlir::math::AbsFOp, mlir::math::CeilOp, mlir::math::FloorOp,
                  mlir::math::RoundOp, mlir::math::RoundEvenOp,
                  mlir::math::TruncOp, mlir::math::CopySignOp,
                  mlir::math::SqrtOp, mlir::math::FmaOp,
                  mlir::math::CountLeadingZerosOp, mlir::math::CtPopOp>(op))
      return mlir::WalkResult::advance();
    op->emitOpError() << "on " << op->getResult(0).getType()
                      << " is not supported on the GPU (no PTX instruction "
                         "and no libdevice function for it)";
    return mlir::WalkResult::interrupt();
  });
  return mlir::failure(result.wasInterrupted());
}

/// A bf16 constant becomes an LLVM constant of its bits (i16), as every
/// bf16 value does (see the type conversion below). Done in the final
/// conversion: rewritten earlier as a bitcast of an i16 constant, the
/// greedy driver would fold it straight back.
struct Bf16ConstantLowering
    : mlir::OpConversionPattern<mlir::arith::ConstantOp> {
  Bf16ConstantLowering(const mlir::TypeConverter &converter,
                       mlir::MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}
  mlir::LogicalResult
  matchAndRewrite(mlir::arith::ConstantOp op, OpAdaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    mlir::Type intType = bf16AsInteger(op.getType());
    if (!intType)
      return rewriter.notifyMatchFailure(op, "not bf16");
    mlir::TypedAttr bits;
    if (auto f = llvm::dyn_cast<mlir::FloatAttr>(op.getValue()))
      bits = rewriter.getIntegerAttr(intType, f.getValue().bitcastToAPInt());
    else if (auto dense =
                 llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue()))
      bits = llvm::cast<mlir::TypedAttr>(
          dense.bitcast(rewriter.getIntegerType(16)));
    if (!bits)
      return rewriter.notifyMatchFailure(op, "not a float or dense constant");
    rewriter.replaceOpWithNewOp<mlir::LLVM::ConstantOp>(op, intType, bits);
    return mlir::success();
  }
};

/// LLVM makes `fptosi`/`fptoui` of a NaN or of a value out of the integer's
/// range poison, and a store of poison may be deleted. MLIR's polynomial
/// approximations convert such values on purpose: exp (and expm1, tanh,
/// ... built on it) takes the integer part of x / ln 2 with NaN kept, and
/// its result is NaN whatever that part is. On the CPU the conversion gives
/// some integer and the result is NaN; where LLVM can see that x is NaN (a
/// clamp with a NaN constant), it folded the conversion to poison and
/// deleted the kernel's store, leaving the output unwritten. A `freeze`
/// after each conversion makes it some fixed integer instead: no
/// instruction, and the kernel computes what the hardware computes.
/// (tessel's own float -> integer converts clamp first, ScalarOps.cpp.)
void freezeFloatToIntConversions(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::Operation *> conversions;
  module.walk([&](mlir::Operation *op) {
    if (llvm::isa<mlir::LLVM::FPToSIOp, mlir::LLVM::FPToUIOp>(op))
      conversions.push_back(op);
  });
  for (mlir::Operation *op : conversions) {
    mlir::OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    mlir::Value converted = op->getResult(0);
    auto frozen = b.create<mlir::LLVM::FreezeOp>(op->getLoc(), converted);
    converted.replaceAllUsesExcept(frozen, frozen);
  }
}

/// LLVM 19's SLP vectorizer miscompiles `uitofp` of a narrow integer that
/// is the negation of a widened i1 (a u16 negate of a converted pred, then
/// a convert to float): it narrowed `uitofp (sub 0, zext i1 to i16)` of 4
/// lanes to `uitofp <4 x i1>`, 1.0 where 65535.0 was right (random fusion
/// seed 2154, with the GPU's launch on the CPU). A zext to i32 first does
/// not help: InstCombine folds `uitofp (zext x)` back to `uitofp x`. So an
/// unsigned conversion of at most 16 bits to f32 or f64 is made without
/// `uitofp`: the value is put into the mantissa of 2^23 (2^52 for f64)
/// and 2^23 is subtracted, which is exact (the value is below 2^16) and
/// gives the same bits.
void convertNarrowUnsignedExactly(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::LLVM::UIToFPOp> conversions;
  module.walk([&](mlir::LLVM::UIToFPOp op) {
    mlir::Type from = mlir::getElementTypeOrSelf(op.getArg().getType());
    mlir::Type to = mlir::getElementTypeOrSelf(op.getType());
    if (from.getIntOrFloatBitWidth() <= 16 && (to.isF32() || to.isF64()))
      conversions.push_back(op);
  });
  for (mlir::LLVM::UIToFPOp op : conversions) {
    mlir::OpBuilder b(op);
    mlir::Location loc = op.getLoc();
    mlir::Type to = mlir::getElementTypeOrSelf(op.getType());
    bool f64 = to.isF64();
    mlir::Type bits = f64 ? b.getI64Type() : b.getI32Type();
    // 2^52 or 2^23 and its bit pattern.
    double magic = f64 ? 4503599627370496.0 : 8388608.0;
    int64_t pattern = f64 ? int64_t(0x4330000000000000) : int64_t(0x4B000000);
    mlir::Type wide = bits;
    auto vector = llvm::dyn_cast<mlir::VectorType>(op.getArg().getType());
    if (vector)
      wide = vector.clone(bits);
    auto constant = [&](mlir::Type type, mlir::Attribute value) {
      if (vector)
        value = mlir::SplatElementsAttr::get(
            llvm::cast<mlir::ShapedType>(vector.clone(type)), value);
      return b.create<mlir::LLVM::ConstantOp>(
          loc, vector ? mlir::Type(vector.clone(type)) : type, value);
    };
    mlir::Value x = b.create<mlir::LLVM::ZExtOp>(loc, wide, op.getArg());
    mlir::Value biased = b.create<mlir::LLVM::OrOp>(
        loc, x, constant(bits, b.getIntegerAttr(bits, pattern)));
    mlir::Value asFloat =
        b.create<mlir::LLVM::BitcastOp>(loc, op.getType(), biased);
    mlir::Value exact = b.create<mlir::LLVM::FSubOp>(
        loc, asFloat, constant(to, b.getFloatAttr(to, magic)));
    op.replaceAllUsesWith(exact);
    op.erase();
  }
}

struct LowerToLlvmPass
    : public mlir::PassWrapper<LowerToLlvmPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToLlvmPass)
  llvm::StringRef getArgument() const final { return "tessel-lower-to-llvm"; }
  llvm::StringRef getDescription() const final {
    return "Lower arith, math, scf and func to the llvm dialect";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::LLVM::LLVMDialect, mlir::cf::ControlFlowDialect,
                    mlir::func::FuncDialect, mlir::arith::ArithDialect,
                    mlir::NVVM::NVVMDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *context = &getContext();
    bool gpu = false;
    module.walk(
        [&](mlir::func::FuncOp func) { gpu |= func->hasAttr(kGpuKernelAttr); });

    // sin, cos, cbrt and atan2 go to the C library before any
    // approximation: MLIR's polynomials for them have no range reduction
    // for large arguments (sin(1e30) comes out infinite), take cbrt(inf) to
    // NaN and lose the sign of zero in atan2 (MathFunctionsTest).
    if (gpu) {
      mlir::RewritePatternSet early(context);
      populateLibdeviceEarlyPatterns(early);
      early.add<NegateAsSignFlip, NativeBf16Arithmetic>(context);
      if (mlir::failed(
              mlir::applyPatternsAndFoldGreedily(module, std::move(early))))
        return signalPassFailure();
    } else if (mlir::failed(lowerToLibm<mlir::math::SinOp, mlir::math::CosOp,
                                        mlir::math::CbrtOp, mlir::math::AtanOp,
                                        mlir::math::Atan2Op>(module))) {
      return signalPassFailure();
    }

    mlir::RewritePatternSet expand(context);
    mlir::populateMathPolynomialApproximationPatterns(expand);
    // GPU arithmetic makes canonical NaNs, x86 keeps payloads.
    if (gpu)
      populateNativeBf16RoundingPatterns(expand);
    else
      populateBf16RoundingPatterns(expand);
    if (!gpu) {
      expand.add<WidenedHalfNaNTest>(context);
      populateExpApproximationPatterns(expand);
    }
    mlir::arith::populateExpandBFloat16Patterns(expand);
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(expand);
    if (mlir::failed(
            mlir::applyPatternsAndFoldGreedily(module, std::move(expand))))
      return signalPassFailure();

    if (gpu) {
      useLibdeviceHypot(module);
      mlir::RewritePatternSet late(context);
      populateLibdeviceLatePatterns(late);
      populateGpuIntegerMinMaxPatterns(late);
      if (mlir::failed(
              mlir::applyPatternsAndFoldGreedily(module, std::move(late))) ||
          mlir::failed(checkGpuMath(module)))
        return signalPassFailure();
    } else if (mlir::failed(
                   lowerToLibm<mlir::math::TanhOp, mlir::math::ErfOp,
                               mlir::math::TanOp, mlir::math::AtanOp,
                               mlir::math::Atan2Op, mlir::math::Log1pOp,
                               mlir::math::ExpM1Op>(module))) {
      return signalPassFailure();
    }

    mlir::ConversionTarget cfTarget(*context);
    cfTarget.addIllegalDialect<mlir::scf::SCFDialect>();
    cfTarget.markUnknownOpDynamicallyLegal(
        [](mlir::Operation *) { return true; });
    mlir::RewritePatternSet cf(context);
    mlir::populateSCFToControlFlowConversionPatterns(cf);
    if (mlir::failed(
            mlir::applyPartialConversion(module, cfTarget, std::move(cf))))
      return signalPassFailure();

    mlir::LLVMConversionTarget target(*context);
    target.addLegalOp<mlir::ModuleOp>();
    target.addLegalDialect<mlir::NVVM::NVVMDialect>();
    mlir::LLVMTypeConverter converter(context);
    // bf16 values, which only move once arithmetic is expanded, are i16:
    // LLVM would copy a bf16 through f32 and flush subnormals on the way
    // back (LowerTensors.cpp says more).
    converter.addConversion(
        [](mlir::FloatType type) -> std::optional<mlir::Type> {
          if (!type.isBF16())
            return std::nullopt;
          return bf16AsInteger(type);
        });
    converter.addConversion(
        [&](mlir::VectorType type) -> std::optional<mlir::Type> {
          mlir::Type intType = bf16AsInteger(type);
          if (!intType)
            return std::nullopt;
          return converter.convertType(intType);
        });
    mlir::RewritePatternSet patterns(context);
    mlir::arith::populateArithToLLVMConversionPatterns(converter, patterns);
    mlir::populateMathToLLVMConversionPatterns(converter, patterns);
    // complex.create, re and im (ScalarOpsComplex.cpp) on structs.
    mlir::populateComplexToLLVMConversionPatterns(converter, patterns);
    mlir::populateFuncToLLVMConversionPatterns(converter, patterns);
    mlir::cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    mlir::populateVectorToLLVMConversionPatterns(converter, patterns);
    patterns.add<Bf16ConstantLowering>(converter, context);
    if (mlir::failed(
            mlir::applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    freezeFloatToIntConversions(module);
    convertNarrowUnsignedExactly(module);

    module.walk([&](mlir::LLVM::LLVMFuncOp func) {
      auto threads =
          func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads");
      if (!func->hasAttr(kGpuKernelAttr) || !threads)
        return;
      mlir::Builder b(context);
      func->setAttr(mlir::NVVM::NVVMDialect::getKernelFuncAttrName(),
                    b.getUnitAttr());
      func->setAttr(mlir::NVVM::NVVMDialect::getMaxntidAttrName(),
                    b.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(threads.getInt()), 1, 1}));
      // A kernel's buffers: its outputs are its own, and the inputs it
      // only reads (the same buffer may come twice), so no pointer aliases
      // memory that another writes.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (llvm::isa<mlir::LLVM::LLVMPointerType>(
                func.getArgument(i).getType()))
          func.setArgAttr(i, mlir::LLVM::LLVMDialect::getNoAliasAttrName(),
                          b.getUnitAttr());
    });
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerToLlvmPass() {
  return std::make_unique<LowerToLlvmPass>();
}

} // namespace tessel
