//===- IndexingMapParserTest.cpp - XLA's text form, in and out ------------===//
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/MLIRContext.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>

using namespace tessel;

namespace {

class ParserTest : public ::testing::Test {
protected:
  std::string roundTrip(const std::string &text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    if (!map)
      return "error: " + columnText(map.error());
    return map->toString();
  }
  std::string errorOf(const std::string &text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    if (map)
      return "parsed: " + map->toString();
    return columnText(map.error());
  }
  mlir::MLIRContext context;
};

TEST_F(ParserTest, CanonicalFormsRoundTrip) {
  for (const char *text : {
           "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]",
           "(d0, d1)[s0] -> (d1, d0 + s0), domain: d0 in [0, 9], d1 in [0, "
           "19], s0 in [0, 3], d0 + s0 in [0, 11]",
           "(d0)[s0]{rt0} -> (d0 + s0 + rt0), domain: d0 in [0, 9], s0 in "
           "[0, 3], rt0 in [-2, 2]",
           "(d0){rt0, rt1} -> (d0 * 2 + rt1, rt0), domain: d0 in [0, 9], rt0 "
           "in [0, 3], rt1 in [0, 1]",
           "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], "
           "d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]",
           "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x "
           "floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + "
           "vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], "
           "vector_index in [0, 3]",
           "(d0, d1) -> (d0 - d1, d0 - d1 * 2, -d0, d0 * -2, d0 ceildiv 3, "
           "(d0 + d1) * 2, d0 - (d1 floordiv 2) * 3), domain: d0 in [-5, 5], "
           "d1 in [0, 3]",
           "() -> ()",
           "() -> (7)",
           "(d0) -> (), domain: d0 in [0, 0]",
           "(d0) -> (d0), domain: d0 in [-9223372036854775808, "
           "9223372036854775807]",
       })
    EXPECT_EQ(roundTrip(text), text);
}

TEST_F(ParserTest, SpacesLineBreaksAndXlaExtras) {
  // XLA's multi-line form, and the is_simplified flag of newer XLA.
  EXPECT_EQ(roundTrip("(d0, d1)[s0] -> (d1,\n d0 + s0),\ndomain:\nd0 in [0, "
                      "9],\nd1 in [0, 19],\ns0 in [0, 3],\nd0 + s0 in [0, 11],"
                      "\nis_simplified: false"),
            "(d0, d1)[s0] -> (d1, d0 + s0), domain: d0 in [0, 9], d1 in [0, "
            "19], s0 in [0, 3], d0 + s0 in [0, 11]");
  EXPECT_EQ(roundTrip("(d0)->(d0*4+d0),domain:d0 in[0,3]"),
            "(d0) -> (d0 * 5), domain: d0 in [0, 3]");
}

TEST_F(ParserTest, ConstraintsPrintSorted) {
  EXPECT_EQ(roundTrip("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], "
                      "d1 mod 2 in [0, 0], d0 + d1 in [0, 9], d0 mod 3 in [1, "
                      "1]"),
            "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in "
            "[0, 9], d0 mod 3 in [1, 1], d1 mod 2 in [0, 0]");
  // A repeated constraint intersects; a constant one that holds vanishes.
  EXPECT_EQ(roundTrip("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [0, "
                      "2], d0 mod 4 in [1, 3], 3 in [0, 5]"),
            "(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [1, 2]");
}

TEST_F(ParserTest, MlirPrecedenceAndFolding) {
  // * floordiv ceildiv mod bind tighter than + -, left to right; unary minus
  // applies to its operand.
  EXPECT_EQ(roundTrip("(d0) -> (d0 + d0 floordiv 2 * 3, -d0 mod 4, d0 * 4 "
                      "floordiv 2), domain: d0 in [0, 9]"),
            "(d0) -> (d0 + (d0 floordiv 2) * 3, (-d0) mod 4, d0 * 2), "
            "domain: d0 in [0, 9]");
}

TEST_F(ParserTest, NamesAndDefaults) {
  Expected<IndexingMap> map = parseIndexingMap(
      "(d0, x)[s0, k]{rt0} -> (d0 + x + s0 + k + rt0), domain: d0 in [0, "
      "1], x in [0, 1], s0 in [0, 1], k in [0, 1], rt0 in [0, 1]",
      &context);
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_EQ(map->getDimVar(0).name, "");
  EXPECT_EQ(map->getDimVar(1).name, "x");
  EXPECT_EQ(map->getRangeVars()[0].name, "");
  EXPECT_EQ(map->getRangeVars()[1].name, "k");
  EXPECT_EQ(map->getRTVars()[0].name, "");
  EXPECT_EQ(map->getSymbolName(2), "rt0");
  EXPECT_EQ(map->getNumSymbols(), 3u);
}

TEST_F(ParserTest, ErrorsNameTheColumn) {
  EXPECT_EQ(errorOf("d0 -> (d0)"),
            "1: expected '(' starting the dim variables, as in '(d0, d1) -> "
            "...', found 'd0'");
  EXPECT_EQ(errorOf("(d0, d0) -> (d0), domain: d0 in [0, 1]"),
            "6: variable name 'd0' is used twice");
  EXPECT_EQ(errorOf("(d0) -> (d1), domain: d0 in [0, 1]"),
            "10: unknown variable 'd1', expected one of d0");
  EXPECT_EQ(errorOf("(d0) -> (d0 * d0), domain: d0 in [0, 1]"),
            "13: a product of two variable expressions is not affine, "
            "expected a constant factor");
  EXPECT_EQ(errorOf("(d0)[s0] -> (d0 floordiv s0), domain: d0 in [0, 1], s0 "
                    "in [1, 2]"),
            "17: the divisor of 'floordiv' must be a constant");
  EXPECT_EQ(errorOf("(d0) -> (d0 mod 0), domain: d0 in [0, 1]"),
            "13: the divisor of 'mod' must be positive, found 0");
  EXPECT_EQ(errorOf("(d0) -> (d0 mod -2), domain: d0 in [0, 1]"),
            "13: the divisor of 'mod' must be positive, found -2");
  EXPECT_EQ(errorOf("(d0) -> (d0)"),
            "13: expected ', domain: ' and the range of every variable");
  EXPECT_EQ(errorOf("(d0, d1) -> (d0), domain: d1 in [0, 1], d0 in [0, 1]"),
            "27: expected the range of d0 ('d0 in [lower, upper]'), found "
            "'d1'");
  EXPECT_EQ(errorOf("(d0) -> (d0), domain: d0 in [0 1]"),
            "32: expected ',' between the bounds of a range, found '1'");
  EXPECT_EQ(errorOf("(d0) -> (d0), domain: d0 in [0, 1], d0 + 1"),
            "43: expected 'in' after a constraint's expression, found the end "
            "of the input");
  EXPECT_EQ(errorOf("(d0) -> (d0), domain: d0 in [0, 99999999999999999999]"),
            "33: integer 99999999999999999999 does not fit in 64 bits");
  EXPECT_EQ(errorOf("(d0) -> (d0 * 4611686018427387904), domain: d0 in [0, "
                    "1]"),
            "13: constants too large near '*': the expression would overflow "
            "64 bits");
  // Folding multiplies factors: (e * 400012453) * 47 is e * 18800585291,
  // whose bound with the 8100002453 inside e is past 64 bits. Refused as
  // written, as it would be as printed (found by the parser fuzzer).
  EXPECT_EQ(errorOf("(d0, d1) -> ((d0 * 8100002453 + 473 + d1) floordiv 3 * "
                    "400012453 * 47 ceildiv 32), domain: d0 in [0, 15], d1 in "
                    "[0, 7]"),
            "66: constants too large near '*': the expression would overflow "
            "64 bits");
  EXPECT_EQ(errorOf("(d0) -> (d0 $ 1), domain: d0 in [0, 1]"),
            "13: expected ',' or ')' after a result, found '$'");
  EXPECT_EQ(errorOf("(d0) -> (d0), domain: d0 in [0, 1] extra"),
            "36: expected ',' or the end after a range, found 'extra'");
  EXPECT_EQ(errorOf("(mod) -> (0), domain: mod in [0, 1]"),
            "2: expected a variable name, found 'mod'");
  EXPECT_EQ(errorOf("KNOWN EMPTY"),
            "1: expected '(' starting the dim variables, as in '(d0, d1) -> "
            "...', found 'KNOWN'");
}

/// Mutated inputs never crash the parser; whatever parses prints back to a
/// text that parses to the same map, and simplifies without crashing.
TEST_F(ParserTest, MutatedInputsNeverCrash) {
  const char *seeds[] = {
      "(d0, d1)[s0]{rt0} -> (d1 floordiv 4, (d0 + s0) mod 3, d0 * -2 + rt0 "
      "ceildiv 2), domain: d0 in [0, 9], d1 in [-3, 19], s0 in [0, 3], rt0 "
      "in [0, 2], d0 + s0 in [0, 11], (d1 - 1) mod 2 in [0, 0]",
      "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) "
      "mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x "
      "in [0, 127], bl_x in [0, 24575], vector_index in [0, 3], "
      "is_simplified: true",
  };
  const std::string alphabet = "()[]{},:+-*0123456789 dsrtmodfloorcilin_x>";
  std::mt19937_64 rng(5);
  auto uniform = [&](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seeds[i % 2];
    for (int edits = 1 + uniform(4); edits > 0; --edits) {
      size_t at = uniform(text.size());
      switch (uniform(3)) {
      case 0:
        text.erase(at, 1 + uniform(3));
        break;
      case 1:
        text.insert(at, 1, alphabet[uniform(alphabet.size())]);
        break;
      default:
        text[at] = alphabet[uniform(alphabet.size())];
        break;
      }
    }
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    if (!map) {
      // Every error points into the text.
      ASSERT_TRUE(map.error().span) << map.error().message;
      EXPECT_EQ(map.error().span->line, 1) << map.error().message;
      EXPECT_LE(map.error().span->begin, text.size()) << map.error().message;
      continue;
    }
    ++parsed;
    ASSERT_FALSE(map->verify().has_value()) << text;
    if (!map->isKnownEmpty()) {
      Expected<IndexingMap> again = parseIndexingMap(map->toString(), &context);
      ASSERT_TRUE(again.ok()) << map->toString();
      EXPECT_EQ(*again, *map);
    }
    IndexingMap simplified = map->simplified();
    ASSERT_FALSE(simplified.verify().has_value()) << text;
  }
  EXPECT_GT(parsed, 300);
}

TEST_F(ParserTest, ExpressionsAlone) {
  Expected<mlir::AffineExpr> expr = parseAffineExpr(
      "(i floordiv 8) mod 512 - j * 2", {"i", "j"}, {}, &context);
  ASSERT_TRUE(expr.ok()) << expr.error().message;
  EXPECT_EQ(affineExprToString(*expr, {"i", "j"}, {}),
            "(i floordiv 8) mod 512 - j * 2");
  EXPECT_EQ(affineExprToString(*expr, {}, {}),
            "(d0 floordiv 8) mod 512 - d1 * 2");
  Expected<mlir::AffineExpr> bad = parseAffineExpr("i +", {"i"}, {}, &context);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(columnText(bad.error()),
            "4: expected an expression (a variable, an integer, '-' or '('), "
            "found the end of the input");
}

TEST_F(ParserTest, ErrorsUnderlineTheToken) {
  Expected<IndexingMap> map =
      parseIndexingMap("(d0) -> (d0 + d1), domain: d0 in [0, 3]", &context);
  ASSERT_FALSE(map);
  EXPECT_EQ(renderError(map.error().inSource("<map>")),
            "<map>:1:15: error: unknown variable 'd1', expected one of d0\n"
            "(d0) -> (d0 + d1), domain: d0 in [0, 3]\n"
            "              ^~");
}

} // namespace
