//===- ShapeParser.cpp - Parse XLA shape-with-layout strings --------------===//
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Support/Utf8.h"

#include "tessel/Layout/TiledLayout.h"

#include <cctype>

namespace tessel {
/// The most dims a shape may have (XLA's largest in practice are far
/// smaller).
constexpr int kMaxRank = 1024;

namespace {

/// Where each part of a layout was written, to point errors at it.
struct LayoutPositions {
  size_t open = 0;
  std::vector<size_t> minorToMajor;
  std::vector<std::vector<size_t>> tileDims;
  std::vector<size_t> tiles;
  size_t l = 0, e = 0, s = 0, m = 0;
  std::vector<size_t> splitConfigs;

  size_t of(const LayoutProblem &problem) const {
    using Part = LayoutProblem::Part;
    switch (problem.part) {
    case Part::MinorToMajor:
      return minorToMajor[problem.index];
    case Part::Tile:
      if (problem.subIndex <
          static_cast<int64_t>(tileDims[problem.index].size()))
        return tileDims[problem.index][problem.subIndex];
      return tiles[problem.index];
    case Part::L:
      return l;
    case Part::E:
      return e;
    case Part::S:
      return s;
    case Part::M:
      return m;
    case Part::SplitConfig:
      return splitConfigs[problem.index];
    case Part::Layout:
      break;
    }
    return open;
  }
};

class Parser {
public:
  Parser(std::string_view text, size_t pos) : text(text), pos(pos) {}

  bool parseShape(Shape &shape, int depth = 0);
  bool parseLayout(Layout &layout, LayoutPositions &positions, int depth);
  /// Checks a parsed array shape and its layout, pointing at the part at
  /// fault.
  bool verify(const Shape &shape, size_t start,
              const LayoutPositions &positions);

  std::string_view text;
  size_t pos;
  size_t errorPos = 0;
  size_t errorEnd = 0;
  std::string errorMessage;
  bool failed = false;

  /// Keeps the first error: at byte `at`, underlining up to `end`.
  bool fail(size_t at, std::string message, size_t end = 0) {
    if (!failed) {
      failed = true;
      errorPos = at;
      errorEnd = end;
      errorMessage = std::move(message);
    }
    return false;
  }
  Error takeError() {
    return Error::at(errorPos, errorEnd, std::move(errorMessage));
  }

  void skipSpace() {
    for (;;) {
      while (pos < text.size() &&
             std::isspace(static_cast<unsigned char>(text[pos])))
        ++pos;
      if (text.substr(pos, 2) != "/*")
        return;
      size_t end = text.find("*/", pos + 2);
      pos = end == std::string_view::npos ? text.size() : end + 2;
    }
  }
  char peek() {
    skipSpace();
    return pos < text.size() ? text[pos] : '\0';
  }
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  std::string found() {
    skipSpace();
    if (pos >= text.size())
      return "the end of the input";
    if (static_cast<unsigned char>(text[pos]) >= 0x80)
      return quoteCharacter(text, pos);
    size_t end = pos + 1;
    while (end < text.size() && end < pos + 12 &&
           std::isalnum(static_cast<unsigned char>(text[end])) &&
           std::isalnum(static_cast<unsigned char>(text[pos])))
      ++end;
    return "'" + std::string(text.substr(pos, end - pos)) + "'";
  }
  bool expect(char c, const char *what) {
    if (consume(c))
      return true;
    return fail(pos, std::string("expected ") + what + " but found " + found());
  }
  /// A non-negative decimal integer.
  bool parseInt(int64_t &value, const char *what) {
    skipSpace();
    size_t start = pos;
    if (pos >= text.size() ||
        !std::isdigit(static_cast<unsigned char>(text[pos])))
      return fail(pos,
                  std::string("expected ") + what + " but found " + found());
    value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      int digit = text[pos] - '0';
      if (value > (INT64_MAX - digit) / 10)
        return fail(start, std::string(what) + " is too large for 64 bits");
      value = value * 10 + digit;
      ++pos;
    }
    return true;
  }
  /// An integer that may be negative (for values a verifier rejects with a
  /// better message than "expected a number").
  bool parseSignedInt(int64_t &value, const char *what) {
    bool negative = consume('-');
    if (!parseInt(value, what))
      return false;
    if (negative)
      value = -value;
    return true;
  }
  bool parseTypeName(PrimitiveType &type) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    std::string_view name = text.substr(start, pos - start);
    if (name.empty())
      return fail(start,
                  "expected an element type such as f32 but found " + found());
    std::optional<PrimitiveType> parsed = parsePrimitiveType(name);
    if (!parsed) {
      std::string known;
      for (PrimitiveType t : kArrayTypes)
        known +=
            (known.empty() ? "" : ", ") + std::string(primitiveTypeName(t));
      size_t end = pos;
      pos = start;
      return fail(start,
                  "unknown element type '" + std::string(name) +
                      "', expected one of " + known,
                  end);
    }
    type = *parsed;
    return true;
  }
};

bool Parser::parseShape(Shape &shape, int depth) {
  if (depth > 64)
    return fail(pos, "shapes nested more than 64 deep");
  size_t start = (skipSpace(), pos);
  if (consume('(')) {
    std::vector<Shape> elements;
    if (!consume(')')) {
      do {
        Shape element;
        if (!parseShape(element, depth + 1))
          return false;
        elements.push_back(std::move(element));
      } while (consume(','));
      if (!expect(')', "',' or ')' in a tuple shape"))
        return false;
    }
    shape = Shape::makeTuple(std::move(elements));
    return true;
  }
  shape = Shape();
  if (!parseTypeName(shape.elementType))
    return false;
  if (!expect('[', "'[' after the element type"))
    return false;
  if (!consume(']')) {
    do {
      // Code that walks the dims of a literal recurses once per dim.
      if (shape.dims.size() == static_cast<size_t>(kMaxRank))
        return fail((peek(), pos), "more than " + std::to_string(kMaxRank) +
                                       " dims, the most tessel handles");
      int64_t dim = 0;
      bool dynamic = false;
      if (consume('?')) {
        dim = Shape::kUnboundedSize;
        dynamic = true;
      } else {
        if (consume('<')) {
          if (!expect('=', "'<=' for a bounded dynamic dim"))
            return false;
          dynamic = true;
        }
        if (!parseInt(dim, "a dimension size (a non-negative integer)"))
          return false;
      }
      shape.dims.push_back(dim);
      shape.dynamicDims.push_back(dynamic);
    } while (consume(','));
    if (!expect(']', "',' or ']' in the dims"))
      return false;
  }
  bool anyDynamic = false;
  for (bool d : shape.dynamicDims)
    anyDynamic |= d;
  if (!anyDynamic)
    shape.dynamicDims.clear();
  if (shape.isToken() && !shape.dims.empty())
    return fail(start, "a token shape has no dims, expected token[]");

  LayoutPositions positions;
  if (peek() == '{') {
    if (shape.isToken())
      return fail(pos, "a token shape has no layout, expected token[]");
    Layout layout;
    if (!parseLayout(layout, positions, depth))
      return false;
    shape.layout = std::move(layout);
  }
  return verify(shape, start, positions);
}

bool Parser::verify(const Shape &shape, size_t start,
                    const LayoutPositions &positions) {
  if (!shape.isArray())
    return true;
  if (std::optional<LayoutProblem> problem = verifyLayout(shape))
    return fail(positions.of(*problem), problem->message);
  if (!shape.dynamicDims.empty())
    return true;
  Expected<TiledLayout> tiled = TiledLayout::get(shape);
  if (!tiled)
    return fail(shape.layout ? positions.open : start, tiled.error().message);
  return true;
}

bool Parser::parseLayout(Layout &layout, LayoutPositions &positions,
                         int depth) {
  positions.open = (skipSpace(), pos);
  if (!expect('{', "'{'"))
    return false;
  if (peek() != ':' && peek() != '}') {
    do {
      int64_t dim;
      positions.minorToMajor.push_back((skipSpace(), pos));
      if (!parseSignedInt(dim, "a dim number in minor_to_major"))
        return false;
      layout.minorToMajor.push_back(dim);
    } while (consume(','));
  }
  if (consume(':')) {
    std::string seen;
    for (;;) {
      char c = peek();
      size_t at = pos;
      if (c == '}' || c == '\0')
        break;
      // Attribute name: 'SC' is two letters, the others one character.
      std::string name(1, c);
      if (text.substr(pos, 2) == "SC")
        name = "SC";
      if (seen.find("[" + name + "]") != std::string::npos)
        return fail(at, "attribute " + name + " appears twice in the layout");
      seen += "[" + name + "]";
      pos += name.size();
      if (name == "T") {
        if (peek() != '(')
          return fail(pos, "expected '(' to start a tile after T but found " +
                               found());
        while (peek() == '(') {
          positions.tiles.push_back(pos);
          positions.tileDims.emplace_back();
          ++pos;
          Tile tile;
          if (!consume(')')) {
            do {
              positions.tileDims.back().push_back((skipSpace(), pos));
              if (consume('*')) {
                tile.dims.push_back(Tile::kCombine);
                continue;
              }
              int64_t dim;
              if (!parseSignedInt(dim,
                                  "a tile dim (a positive integer or '*')"))
                return false;
              tile.dims.push_back(dim);
            } while (consume(','));
            if (!expect(')', "',' or ')' in a tile"))
              return false;
          }
          layout.tiles.push_back(std::move(tile));
        }
        continue;
      }
      if (name == "L" || name == "E" || name == "S" || name == "M") {
        if (!expect('(', ("'(' after " + name).c_str()))
          return false;
        int64_t value;
        if (!parseSignedInt(value, ("the value of " + name + "(n)").c_str()) ||
            !expect(')', "')'"))
          return false;
        if (name == "L") {
          layout.tailPaddingAlignment = value;
          positions.l = at;
        } else if (name == "E") {
          layout.elementSizeInBits = value;
          positions.e = at;
        } else if (name == "S") {
          layout.memorySpace = value;
          positions.s = at;
        } else {
          layout.dynamicShapeMetadataPrefixBytes = value;
          positions.m = at;
        }
        continue;
      }
      if (name == "#" || name == "*") {
        PrimitiveType type;
        if (!expect('(', ("'(' after " + name).c_str()) ||
            !parseTypeName(type) || !expect(')', "')'"))
          return false;
        (name == "#" ? layout.indexType : layout.pointerType) = type;
        continue;
      }
      if (name == "SC") {
        if (peek() != '(')
          return fail(pos, "expected '(' to start a split config but found " +
                               found());
        while (peek() == '(') {
          positions.splitConfigs.push_back(pos);
          ++pos;
          SplitConfig config;
          if (!parseSignedInt(config.dimension, "a dim number") ||
              !expect(':', "':' after the split dim"))
            return false;
          do {
            int64_t index;
            if (!parseInt(index, "a split index"))
              return false;
            config.splitIndices.push_back(index);
          } while (consume(','));
          if (!expect(')', "',' or ')' in a split config"))
            return false;
          layout.splitConfigs.push_back(std::move(config));
        }
        continue;
      }
      if (name == "P") {
        Shape physical;
        if (!expect('(', "'(' after P") || !parseShape(physical, depth + 1) ||
            !expect(')', "')' after the physical shape"))
          return false;
        layout.physicalShape =
            std::make_shared<const Shape>(std::move(physical));
        continue;
      }
      pos = at;
      return fail(at, "unknown layout attribute " + found() +
                          ", expected one of T L # * E S SC P M");
    }
  }
  return expect('}', "'}' to close the layout");
}

} // namespace

Expected<Shape> parseShapeAt(std::string_view text, size_t &pos) {
  Parser parser(text, pos);
  Shape shape;
  if (!parser.parseShape(shape)) {
    pos = parser.errorPos;
    return parser.takeError();
  }
  pos = parser.pos;
  return shape;
}

Expected<Shape> parseShape(std::string_view text) {
  size_t pos = 0;
  Expected<Shape> shape = parseShapeAt(text, pos);
  if (!shape)
    return shape.takeError().locate(text);
  Parser rest(text, pos);
  if (rest.peek() != '\0')
    return Error::at(rest.pos,
                     "unexpected " + rest.found() + " after the shape")
        .locate(text);
  return shape;
}

Expected<Layout> parseLayoutFor(std::string_view text, const Shape &shape) {
  Parser parser(text, 0);
  Layout layout;
  LayoutPositions positions;
  Shape withLayout = shape;
  if (parser.parseLayout(layout, positions, 0)) {
    withLayout.layout = layout;
    if (parser.peek() != '\0')
      parser.fail(parser.pos,
                  "unexpected " + parser.found() + " after the layout");
    else
      parser.verify(withLayout, 0, positions);
  }
  if (parser.failed)
    return parser.takeError().locate(text);
  return layout;
}

} // namespace tessel
