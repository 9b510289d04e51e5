//===- PrimitiveType.h - XLA element types and their widths -----*- C++ -*-===//
//
// The element types of XLA shapes, with their names as XLA prints them and
// their widths:
//
//   type      bitWidth  byteWidth   note
//   pred          1         1       one byte each unless the layout says E(1)
//   s4/u4         4         1       packed two per byte only with E(4)
//   bf16         16         2
//   c64          64         8       two f32
//
// `byteWidth` is what one element occupies when the layout has no E(n); with
// E(n) an element occupies exactly n bits (see Layout::elementSizeInBits).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_PRIMITIVETYPE_H
#define TESSEL_LAYOUT_PRIMITIVETYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

enum class PrimitiveType : uint8_t {
  Invalid,
  Pred,
  S2,
  S4,
  S8,
  S16,
  S32,
  S64,
  U2,
  U4,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
  C64,
  C128,
  F8E5M2,
  F8E4M3FN,
  F8E4M3B11FNUZ,
  F8E5M2FNUZ,
  F8E4M3FNUZ,
  Token,
};

/// Every valid array element type, in declaration order (for tests and
/// generators).
constexpr PrimitiveType kArrayTypes[] = {
    PrimitiveType::Pred,       PrimitiveType::S2,
    PrimitiveType::S4,         PrimitiveType::S8,
    PrimitiveType::S16,        PrimitiveType::S32,
    PrimitiveType::S64,        PrimitiveType::U2,
    PrimitiveType::U4,         PrimitiveType::U8,
    PrimitiveType::U16,        PrimitiveType::U32,
    PrimitiveType::U64,        PrimitiveType::F16,
    PrimitiveType::BF16,       PrimitiveType::F32,
    PrimitiveType::F64,        PrimitiveType::C64,
    PrimitiveType::C128,       PrimitiveType::F8E5M2,
    PrimitiveType::F8E4M3FN,   PrimitiveType::F8E4M3B11FNUZ,
    PrimitiveType::F8E5M2FNUZ, PrimitiveType::F8E4M3FNUZ,
};

/// The lower-case name XLA prints ("bf16", "f8e4m3fn", "token").
std::string_view primitiveTypeName(PrimitiveType type);

/// Parses a type name, case-insensitively ("F32" and "f32" both work).
std::optional<PrimitiveType> parsePrimitiveType(std::string_view name);

/// Bits of one value: pred 1, s4 4, f32 32, c64 64. Token: 0.
int bitWidth(PrimitiveType type);

/// Bytes one element occupies without E(n): ceil(bitWidth / 8).
int byteWidth(PrimitiveType type);

/// True for the types that can hold array data (everything but Invalid and
/// Token).
bool isArrayType(PrimitiveType type);
bool isSignedInteger(PrimitiveType type);
bool isUnsignedInteger(PrimitiveType type);
/// Signed or unsigned integer (not pred).
bool isInteger(PrimitiveType type);
bool isFloat(PrimitiveType type);
bool isComplex(PrimitiveType type);

/// The .npy descr numpy writes for the type ("<f4", "|b1", "<c8"). Types
/// numpy lacks (bf16, f8, s4, ...) get a void descr of their byte width
/// ("<V2", "<V1"), which is how numpy saves ml_dtypes arrays.
std::string npyDescr(PrimitiveType type);
/// The type a .npy descr names, when it names exactly one ("<f4" -> f32);
/// nullopt for void descrs and unknown ones.
std::optional<PrimitiveType> primitiveTypeFromNpyDescr(std::string_view descr);
/// Whether an array with this descr can hold elements of `type`: its own
/// descr, or a void descr of the same byte width.
bool npyDescrMatches(std::string_view descr, PrimitiveType type);

} // namespace tessel

#endif // TESSEL_LAYOUT_PRIMITIVETYPE_H
