//===- IndexingMapParser.cpp - XLA's text form of indexing maps -----------===//
//
//   map        := '(' names ')' ['[' names ']'] ['{' names '}'] '->'
//                 '(' [expr (',' expr)*] ')'
//                 [',' 'domain' ':' bound (',' bound)* (',' constraint)*]
//                 [',' 'is_simplified' ':' ('true' | 'false')]
//   bound      := NAME 'in' interval     (every variable, in order)
//   constraint := expr 'in' interval
//   interval   := '[' INT ',' INT ']'
//   expr       := product (('+' | '-') product)*
//   product    := unary (('*' | 'floordiv' | 'ceildiv' | 'mod') unary)*
//   unary      := '-' unary | INT | NAME | '(' expr ')'
//
//===----------------------------------------------------------------------===//
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Support/Utf8.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cctype>
#include <functional>

using mlir::AffineBinaryOpExpr;
using mlir::AffineConstantExpr;
using mlir::AffineExpr;
using mlir::AffineExprKind;

namespace tessel {
namespace {

struct Token {
  enum Kind {
    Identifier,
    Integer,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Plus,
    Minus,
    Star,
    Arrow,
    End,
    Invalid
  };
  Kind kind = Invalid;
  llvm::StringRef text;
  size_t offset = 0;
};

/// Constants an expression may hold before MLIR's folding could overflow:
/// every constant MLIR folds is bounded by sums and products of these.
constexpr int64_t kConstantLimit = int64_t(1) << 62;

/// A bound on the constants MLIR can fold out of `expr`, saturated at
/// kConstantLimit: a constant's magnitude, 1 for a dim or symbol, the sum
/// over the operands of a sum or division, the product over those of a
/// product. Folding distributes a factor over a sum and multiplies the
/// factors of a product ((e * 400012453) * 47 becomes e * 18800585291), so
/// a sum of the magnitudes was not a bound: a map it let through printed as
/// one it refused (the parser fuzzer, 2026-11-28). Folding never makes this
/// bound larger, so what prints parses again.
int64_t constantMagnitude(AffineExpr expr) {
  auto saturate = [](__int128 v) -> __int128 {
    return v >= kConstantLimit ? kConstantLimit : v;
  };
  std::function<__int128(AffineExpr)> bound = [&](AffineExpr e) -> __int128 {
    if (auto constant = llvm::dyn_cast<AffineConstantExpr>(e)) {
      __int128 value = constant.getValue();
      return saturate(value < 0 ? -value : value);
    }
    auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(e);
    if (!binary)
      return 1;
    __int128 lhs = bound(binary.getLHS()), rhs = bound(binary.getRHS());
    if (e.getKind() == AffineExprKind::Mul)
      return saturate(lhs * rhs);
    return saturate(lhs + rhs);
  };
  return static_cast<int64_t>(bound(expr));
}

/// How deep parentheses and unary minuses may nest, and how many binary
/// operators one map may have. The parser, MLIR's folding and every walk of
/// an expression recurse once per level of the tree: these bounds keep the
/// recursion far from the end of the stack.
constexpr int kMaxNesting = 256;
constexpr int kMaxOperators = 4096;

class Parser {
public:
  Parser(llvm::StringRef text, mlir::MLIRContext *context)
      : text(text), context(context) {
    advance();
  }

  Expected<IndexingMap> parseMap();
  Expected<AffineExpr> parseWholeExpr(llvm::ArrayRef<std::string> dimNames,
                                      llvm::ArrayRef<std::string> symbolNames);

private:
  // Lexing.
  void advance();
  bool consumeIf(Token::Kind kind) {
    if (token.kind != kind)
      return false;
    advance();
    return true;
  }
  bool isKeyword(llvm::StringRef word) const {
    return token.kind == Token::Identifier && token.text == word;
  }

  // Errors: the first one wins; later ones are consequences. `fail`
  // underlines the current token.
  std::nullopt_t fail(const std::string &message) {
    return failAt(token.offset, message, token.offset + token.text.size());
  }
  std::nullopt_t failAt(size_t offset, const std::string &message,
                        size_t end = 0) {
    if (error.empty()) {
      error = message.empty() ? "error" : message;
      errorOffset = offset;
      errorEnd = end;
    }
    return std::nullopt;
  }
  /// The first error, located in the text.
  Error takeError() const {
    return Error::at(errorOffset, errorEnd, error).locate(text.str());
  }
  std::string found() const {
    if (token.kind == Token::End)
      return "the end of the input";
    if (token.kind == Token::Invalid)
      return quoteCharacter(text, token.offset);
    return "'" + token.text.str() + "'";
  }
  bool expect(Token::Kind kind, const char *what) {
    if (consumeIf(kind))
      return true;
    fail(std::string("expected ") + what + ", found " + found());
    return false;
  }

  // Parsing.
  bool parseNames(Token::Kind close, const char *closeText,
                  std::vector<std::string> &names);
  std::optional<int64_t> parseInteger();
  std::optional<Interval> parseInterval();
  std::optional<AffineExpr> parseExpr();
  std::optional<AffineExpr> parseProduct();
  std::optional<AffineExpr> parseUnary();
  std::optional<AffineExpr> parseNestedUnary();
  std::optional<AffineExpr> combine(AffineExprKind kind, AffineExpr lhs,
                                    AffineExpr rhs, size_t offset,
                                    llvm::StringRef spelling);

  llvm::StringRef text;
  mlir::MLIRContext *context;
  size_t position = 0;
  Token token;
  std::string error;
  size_t errorOffset = 0, errorEnd = 0;
  llvm::StringMap<AffineExpr> variables;
  int nesting = 0;
  int operators = 0;
};

void Parser::advance() {
  while (position < text.size() &&
         std::isspace(static_cast<unsigned char>(text[position])))
    ++position;
  token.offset = position;
  if (position >= text.size()) {
    token.kind = Token::End;
    token.text = "";
    return;
  }
  char c = text[position];
  size_t start = position;
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    while (position < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[position])) ||
            text[position] == '_'))
      ++position;
    token.kind = Token::Identifier;
  } else if (std::isdigit(static_cast<unsigned char>(c))) {
    while (position < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[position])))
      ++position;
    token.kind = Token::Integer;
  } else if (c == '-' && position + 1 < text.size() &&
             text[position + 1] == '>') {
    position += 2;
    token.kind = Token::Arrow;
  } else {
    ++position;
    switch (c) {
    case '(':
      token.kind = Token::LParen;
      break;
    case ')':
      token.kind = Token::RParen;
      break;
    case '[':
      token.kind = Token::LBracket;
      break;
    case ']':
      token.kind = Token::RBracket;
      break;
    case '{':
      token.kind = Token::LBrace;
      break;
    case '}':
      token.kind = Token::RBrace;
      break;
    case ',':
      token.kind = Token::Comma;
      break;
    case ':':
      token.kind = Token::Colon;
      break;
    case '+':
      token.kind = Token::Plus;
      break;
    case '-':
      token.kind = Token::Minus;
      break;
    case '*':
      token.kind = Token::Star;
      break;
    default:
      token.kind = Token::Invalid;
      // A whole UTF-8 character, so that messages quote it whole.
      if (static_cast<unsigned char>(c) >= 0x80)
        position = start + std::max<size_t>(1, utf8Length(text, start));
      break;
    }
  }
  token.text = text.slice(start, position);
}

bool isReserved(llvm::StringRef word) {
  return word == "floordiv" || word == "ceildiv" || word == "mod" ||
         word == "domain" || word == "in" || word == "is_simplified";
}

bool Parser::parseNames(Token::Kind close, const char *closeText,
                        std::vector<std::string> &names) {
  if (consumeIf(close))
    return true;
  while (true) {
    if (token.kind != Token::Identifier || isReserved(token.text)) {
      fail("expected a variable name, found " + found());
      return false;
    }
    std::string name = token.text.str();
    AffineExpr placeholder;
    if (!variables.try_emplace(name, placeholder).second) {
      fail("variable name '" + name + "' is used twice");
      return false;
    }
    names.push_back(name);
    advance();
    if (consumeIf(close))
      return true;
    if (!consumeIf(Token::Comma)) {
      fail(std::string("expected ',' or '") + closeText + "', found " +
           found());
      return false;
    }
  }
}

std::optional<int64_t> Parser::parseInteger() {
  size_t start = token.offset;
  bool negative = consumeIf(Token::Minus);
  if (token.kind != Token::Integer)
    return fail("expected an integer, found " + found());
  uint64_t magnitude;
  uint64_t limit = negative ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1;
  if (token.text.getAsInteger(10, magnitude) || magnitude > limit)
    return failAt(start, "integer " + std::string(negative ? "-" : "") +
                             token.text.str() + " does not fit in 64 bits");
  advance();
  if (negative)
    return static_cast<int64_t>(0 - magnitude);
  return static_cast<int64_t>(magnitude);
}

std::optional<Interval> Parser::parseInterval() {
  if (!expect(Token::LBracket, "'[' starting a range [lower, upper]"))
    return std::nullopt;
  std::optional<int64_t> lower = parseInteger();
  if (!lower || !expect(Token::Comma, "',' between the bounds of a range"))
    return std::nullopt;
  std::optional<int64_t> upper = parseInteger();
  if (!upper || !expect(Token::RBracket, "']' closing a range"))
    return std::nullopt;
  return Interval(*lower, *upper);
}

std::optional<AffineExpr> Parser::combine(AffineExprKind kind, AffineExpr lhs,
                                          AffineExpr rhs, size_t offset,
                                          llvm::StringRef spelling) {
  if (++operators > kMaxOperators)
    return failAt(offset, "the map has more than " +
                              std::to_string(kMaxOperators) +
                              " operators, the most tessel parses");
  auto lhsConstant = llvm::dyn_cast<AffineConstantExpr>(lhs);
  auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(rhs);
  auto overflow = [&]() {
    return failAt(offset, "constants too large near '" + spelling.str() +
                              "': the expression would overflow 64 bits");
  };
  switch (kind) {
  case AffineExprKind::Add:
    if (constantMagnitude(lhs) + constantMagnitude(rhs) >= kConstantLimit)
      return overflow();
    return lhs + rhs;
  case AffineExprKind::Mul: {
    if (!lhsConstant && !rhsConstant)
      return failAt(offset, "a product of two variable expressions is not "
                            "affine, expected a constant factor");
    AffineExpr other = rhsConstant ? lhs : rhs;
    int64_t factor =
        rhsConstant ? rhsConstant.getValue() : lhsConstant.getValue();
    __int128 bound =
        static_cast<__int128>(std::max<int64_t>(constantMagnitude(other), 1)) *
        (factor < 0 ? -static_cast<__int128>(factor) : factor);
    if (bound >= kConstantLimit)
      return overflow();
    return other * factor;
  }
  default:
    break;
  }
  if (!rhsConstant)
    return failAt(offset,
                  "the divisor of '" + spelling.str() + "' must be a constant");
  if (rhsConstant.getValue() <= 0)
    return failAt(offset, "the divisor of '" + spelling.str() +
                              "' must be positive, found " +
                              std::to_string(rhsConstant.getValue()));
  if (constantMagnitude(lhs) >= kConstantLimit)
    return overflow();
  uint64_t divisor = rhsConstant.getValue();
  if (kind == AffineExprKind::FloorDiv)
    return lhs.floorDiv(divisor);
  if (kind == AffineExprKind::CeilDiv)
    return lhs.ceilDiv(divisor);
  return lhs % divisor;
}

std::optional<AffineExpr> Parser::parseExpr() {
  std::optional<AffineExpr> lhs = parseProduct();
  while (lhs && (token.kind == Token::Plus || token.kind == Token::Minus)) {
    bool minus = token.kind == Token::Minus;
    size_t offset = token.offset;
    advance();
    std::optional<AffineExpr> rhs = parseProduct();
    if (!rhs)
      return std::nullopt;
    if (minus) {
      rhs = combine(AffineExprKind::Mul, *rhs,
                    mlir::getAffineConstantExpr(-1, context), offset, "-");
      if (!rhs)
        return std::nullopt;
    }
    lhs = combine(AffineExprKind::Add, *lhs, *rhs, offset, minus ? "-" : "+");
  }
  return lhs;
}

std::optional<AffineExpr> Parser::parseProduct() {
  std::optional<AffineExpr> lhs = parseUnary();
  while (lhs) {
    AffineExprKind kind;
    if (token.kind == Token::Star)
      kind = AffineExprKind::Mul;
    else if (isKeyword("floordiv"))
      kind = AffineExprKind::FloorDiv;
    else if (isKeyword("ceildiv"))
      kind = AffineExprKind::CeilDiv;
    else if (isKeyword("mod"))
      kind = AffineExprKind::Mod;
    else
      break;
    size_t offset = token.offset;
    std::string spelling = token.text.str();
    advance();
    std::optional<AffineExpr> rhs = parseUnary();
    if (!rhs)
      return std::nullopt;
    lhs = combine(kind, *lhs, *rhs, offset, spelling);
  }
  return lhs;
}

std::optional<AffineExpr> Parser::parseUnary() {
  if (nesting >= kMaxNesting)
    return fail("parentheses and '-' nest more than " +
                std::to_string(kMaxNesting) + " deep");
  ++nesting;
  std::optional<AffineExpr> result = parseNestedUnary();
  --nesting;
  return result;
}

std::optional<AffineExpr> Parser::parseNestedUnary() {
  size_t offset = token.offset;
  if (consumeIf(Token::Minus)) {
    // A literal keeps its full range: -9223372036854775808 is valid.
    if (token.kind == Token::Integer) {
      position = offset;
      advance();
      std::optional<int64_t> value = parseInteger();
      if (!value)
        return std::nullopt;
      return mlir::getAffineConstantExpr(*value, context);
    }
    std::optional<AffineExpr> operand = parseUnary();
    if (!operand)
      return std::nullopt;
    return combine(AffineExprKind::Mul, *operand,
                   mlir::getAffineConstantExpr(-1, context), offset, "-");
  }
  if (token.kind == Token::Integer) {
    std::optional<int64_t> value = parseInteger();
    if (!value)
      return std::nullopt;
    return mlir::getAffineConstantExpr(*value, context);
  }
  if (consumeIf(Token::LParen)) {
    std::optional<AffineExpr> inner = parseExpr();
    if (!inner || !expect(Token::RParen, "')'"))
      return std::nullopt;
    return inner;
  }
  if (token.kind == Token::Identifier && !isReserved(token.text)) {
    auto it = variables.find(token.text);
    if (it == variables.end()) {
      std::vector<std::string> known;
      for (const auto &entry : variables)
        known.push_back(entry.getKey().str());
      llvm::sort(known);
      return fail("unknown variable '" + token.text.str() + "'" +
                  (known.empty()
                       ? std::string(", the map has none")
                       : ", expected one of " + llvm::join(known, ", ")));
    }
    advance();
    return it->second;
  }
  return fail("expected an expression (a variable, an integer, '-' or '('), "
              "found " +
              found());
}

Expected<AffineExpr>
Parser::parseWholeExpr(llvm::ArrayRef<std::string> dimNames,
                       llvm::ArrayRef<std::string> symbolNames) {
  for (size_t i = 0; i < dimNames.size(); ++i)
    variables[dimNames[i]] = mlir::getAffineDimExpr(i, context);
  for (size_t i = 0; i < symbolNames.size(); ++i)
    variables[symbolNames[i]] = mlir::getAffineSymbolExpr(i, context);
  std::optional<AffineExpr> expr = parseExpr();
  if (expr && token.kind != Token::End)
    fail("expected an operator or the end of the expression, found " + found());
  if (!error.empty())
    return takeError();
  return *expr;
}

Expected<IndexingMap> Parser::parseMap() {
  std::vector<std::string> dimNames, rangeNames, rtNames;
  if (!expect(Token::LParen, "'(' starting the dim variables, as in "
                             "'(d0, d1) -> ...'") ||
      !parseNames(Token::RParen, ")", dimNames))
    return takeError();
  if (consumeIf(Token::LBracket) &&
      !parseNames(Token::RBracket, "]", rangeNames))
    return takeError();
  if (consumeIf(Token::LBrace) && !parseNames(Token::RBrace, "}", rtNames))
    return takeError();
  for (size_t i = 0; i < dimNames.size(); ++i)
    variables[dimNames[i]] = mlir::getAffineDimExpr(i, context);
  std::vector<std::string> symbolNames = rangeNames;
  symbolNames.insert(symbolNames.end(), rtNames.begin(), rtNames.end());
  for (size_t i = 0; i < symbolNames.size(); ++i)
    variables[symbolNames[i]] = mlir::getAffineSymbolExpr(i, context);

  if (!expect(Token::Arrow, "'->' after the variables") ||
      !expect(Token::LParen, "'(' starting the results"))
    return takeError();
  llvm::SmallVector<AffineExpr> results;
  if (!consumeIf(Token::RParen)) {
    while (true) {
      std::optional<AffineExpr> result = parseExpr();
      if (!result)
        return takeError();
      results.push_back(*result);
      if (consumeIf(Token::RParen))
        break;
      if (!expect(Token::Comma, "',' or ')' after a result"))
        return takeError();
    }
  }

  auto defaultName = [](const char *prefix, size_t i) {
    return prefix + std::to_string(i);
  };
  auto variablesFor = [&](const std::vector<std::string> &names,
                          const char *prefix) {
    std::vector<IndexingVariable> vars;
    for (size_t i = 0; i < names.size(); ++i)
      vars.emplace_back(Interval(0, -1),
                        names[i] == defaultName(prefix, i) ? "" : names[i]);
    return vars;
  };
  std::vector<IndexingVariable> dimVars = variablesFor(dimNames, "d");
  std::vector<IndexingVariable> rangeVars = variablesFor(rangeNames, "s");
  std::vector<IndexingVariable> rtVars = variablesFor(rtNames, "rt");
  std::vector<IndexingConstraint> constraints;

  bool hasVariables = !dimNames.empty() || !symbolNames.empty();
  if (consumeIf(Token::Comma)) {
    if (isKeyword("domain")) {
      advance();
      if (!expect(Token::Colon, "':' after 'domain'"))
        return takeError();
      // Every variable's range, in order.
      std::vector<std::pair<IndexingVariable *, std::string>> order;
      for (size_t i = 0; i < dimVars.size(); ++i)
        order.push_back({&dimVars[i], dimNames[i]});
      for (size_t i = 0; i < rangeVars.size(); ++i)
        order.push_back({&rangeVars[i], rangeNames[i]});
      for (size_t i = 0; i < rtVars.size(); ++i)
        order.push_back({&rtVars[i], rtNames[i]});
      for (size_t i = 0; i < order.size(); ++i) {
        const std::string &name = order[i].second;
        if (i > 0 &&
            !expect(Token::Comma, ("',' before the range of " + name).c_str()))
          return takeError();
        if (!(token.kind == Token::Identifier && token.text == name)) {
          fail("expected the range of " + name + " ('" + name +
               " in [lower, upper]'), found " + found());
          return takeError();
        }
        advance();
        if (!isKeyword("in")) {
          fail("expected 'in' after " + name + ", found " + found());
          return takeError();
        }
        advance();
        std::optional<Interval> bounds = parseInterval();
        if (!bounds)
          return takeError();
        order[i].first->bounds = *bounds;
      }
      // Then constraints.
      bool needComma = !order.empty();
      while (token.kind != Token::End) {
        if (needComma && !expect(Token::Comma, "',' or the end after a range"))
          return takeError();
        needComma = true;
        if (isKeyword("is_simplified"))
          break;
        std::optional<AffineExpr> expr = parseExpr();
        if (!expr)
          return takeError();
        if (!isKeyword("in")) {
          fail("expected 'in' after a constraint's expression, found " +
               found());
          return takeError();
        }
        advance();
        std::optional<Interval> bounds = parseInterval();
        if (!bounds)
          return takeError();
        constraints.push_back({*expr, *bounds});
      }
    } else if (!isKeyword("is_simplified")) {
      fail("expected 'domain: ...' after the results, found " + found());
      return takeError();
    }
    if (isKeyword("is_simplified")) {
      advance();
      if (!expect(Token::Colon, "':' after 'is_simplified'"))
        return takeError();
      if (!isKeyword("true") && !isKeyword("false")) {
        fail("expected 'true' or 'false', found " + found());
        return takeError();
      }
      advance();
    }
    if (token.kind != Token::End) {
      fail("expected the end of the map, found " + found());
      return takeError();
    }
  } else if (token.kind != Token::End) {
    fail("expected ', domain: ...' or the end of the map, found " + found());
    return takeError();
  } else if (hasVariables) {
    fail("expected ', domain: ' and the range of every variable");
    return takeError();
  }

  mlir::AffineMap affineMap = mlir::AffineMap::get(
      dimNames.size(), symbolNames.size(), results, context);
  IndexingMap map(affineMap, std::move(dimVars), std::move(rangeVars),
                  std::move(rtVars), constraints);
  if (std::optional<std::string> problem = map.verify())
    return Error::at(0, *problem).locate(text.str());
  return map;
}

} // namespace

Expected<IndexingMap> parseIndexingMap(llvm::StringRef text,
                                       mlir::MLIRContext *context) {
  return Parser(text, context).parseMap();
}

Expected<AffineExpr> parseAffineExpr(llvm::StringRef text,
                                     llvm::ArrayRef<std::string> dimNames,
                                     llvm::ArrayRef<std::string> symbolNames,
                                     mlir::MLIRContext *context) {
  return Parser(text, context).parseWholeExpr(dimNames, symbolNames);
}

} // namespace tessel
