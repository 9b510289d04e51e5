//===- ErrorTest.cpp - Positions of errors and how they are printed -------===//
#include "tessel/Support/Expected.h"

#include <gtest/gtest.h>

#include <type_traits>

using namespace tessel;

namespace {

std::string render(Error error, std::string_view text,
                   const std::string &source = "") {
  return renderError(std::move(error).locate(text).inSource(source));
}

TEST(Error, CaretUnderTheColumn) {
  EXPECT_EQ(
      render(Error::at(11, "not a permutation"), "f32[3,5]{1,1}", "--shape"),
      "--shape:1:12: error: not a permutation\n"
      "f32[3,5]{1,1}\n"
      "           ^");
}

TEST(Error, LineAndColumnOfALaterLine) {
  Error e = Error::at(10, "unknown opcode 'ad'").locate("HloModule\n  x = ad");
  ASSERT_TRUE(e.span);
  EXPECT_EQ(e.span->line, 2);
  EXPECT_EQ(e.span->column, 1);
  EXPECT_EQ(render(Error::at(18, "unknown opcode 'ad'"),
                   "HloModule m\n  x = ad(", "m.hlo"),
            "m.hlo:2:7: error: unknown opcode 'ad'\n"
            "  x = ad(\n"
            "      ^");
}

TEST(Error, ColumnsCountCharactersNotBytes) {
  // 'é' is two bytes: ']' is byte 4 but character 4, 'x' column 5.
  std::string text = "a[\xc3\xa9]x";
  Error e = Error::at(5, "unexpected 'x'").locate(text);
  EXPECT_EQ(e.span->column, 5);
  EXPECT_EQ(renderError(e), "1:5: error: unexpected 'x'\n"
                            "a[\xc3\xa9]x\n"
                            "    ^");
}

TEST(Error, TabsAreExpandedInTheLineAndUnderTheCaret) {
  // The column counts the tab as one character; the caret lines up with
  // where a terminal shows 'x' (tab stops every 8 cells).
  std::string text = "\tab\tx";
  Error e = Error::at(4, "unexpected 'x'").locate(text);
  EXPECT_EQ(e.span->column, 5);
  EXPECT_EQ(renderError(e), "1:5: error: unexpected 'x'\n"
                            "        ab      x\n"
                            "                ^");
}

TEST(Error, RangeIsUnderlined) {
  EXPECT_EQ(render(Error::at(4, 8, "unknown name 'defg'"), "abc defg hij"),
            "1:5: error: unknown name 'defg'\n"
            "abc defg hij\n"
            "    ^~~~");
  // A range of multi-byte characters gets one '~' per character.
  EXPECT_EQ(render(Error::at(2, 8, "bad"), "a \xc3\xa9\xc3\xa9\xc3\xa9 b"),
            "1:3: error: bad\n"
            "a \xc3\xa9\xc3\xa9\xc3\xa9 b\n"
            "  ^~~");
  // A range that goes past the end of the line stops there.
  EXPECT_EQ(render(Error::at(2, 100, "bad"), "a bc\nd"), "1:3: error: bad\n"
                                                         "a bc\n"
                                                         "  ^~");
}

TEST(Error, CaretAtTheEndOfTheText) {
  EXPECT_EQ(render(Error::at(100, "expected ']'"), "f32[3"),
            "1:6: error: expected ']'\n"
            "f32[3\n"
            "     ^");
  EXPECT_EQ(render(Error::at(0, "empty"), ""), "1:1: error: empty\n\n^");
}

TEST(Error, LongLineShowsAnExcerptAroundTheColumn) {
  std::string text = std::string(100000, 'a') + "X" + std::string(100000, 'b');
  std::string out = render(Error::at(100000, "unexpected 'X'"), text, "big");
  EXPECT_LT(out.size(), 400u);
  EXPECT_EQ(out, "big:1:100001: error: unexpected 'X'\n..." +
                     std::string(60, 'a') + "X" + std::string(59, 'b') +
                     "...\n" + std::string(63, ' ') + "^");
  // Near the start: no leading "...", the window is filled after it.
  out = render(Error::at(3, "x"), std::string(1000, 'c'));
  EXPECT_EQ(out, "1:4: error: x\n" + std::string(120, 'c') + "...\n   ^");
}

TEST(Error, ExcerptOfUtf8LineNeverSplitsACharacter) {
  std::string e = "\xc3\xa9";
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += e;
  std::string out = render(Error::at(500, "here"), text);
  // 60 characters before the column, 60 from it: all whole characters.
  std::string window;
  for (int i = 0; i < 120; ++i)
    window += e;
  EXPECT_EQ(out, "1:251: error: here\n..." + window + "...\n" +
                     std::string(63, ' ') + "^");
}

TEST(Error, HugeMessageIsShortened) {
  std::string out = renderError(Error(std::string(1 << 20, 'm')), "tessel");
  EXPECT_LT(out.size(), 2100u);
  EXPECT_NE(out.find("bytes elided"), std::string::npos);
}

TEST(Error, WithoutPosition) {
  EXPECT_EQ(renderError(Error("no such file"), "tessel"),
            "tessel: error: no such file");
  EXPECT_EQ(renderError(Error("no such file")), "error: no such file");
  EXPECT_EQ(renderError(Error("truncated").inSource("x.npy")),
            "x.npy: error: truncated");
  // A span that was never located in its text prints no position.
  EXPECT_EQ(renderError(Error::at(3, "bad").inSource("x")), "x: error: bad");
}

TEST(Error, ControlCharactersAndBadBytesAreShownAsQuestionMarks) {
  EXPECT_EQ(render(Error::at(2, "bad"), "a\x01\xff]\r\nz"), "1:3: error: bad\n"
                                                            "a??]\n"
                                                            "  ^");
}

TEST(Error, ShiftMovesAPieceIntoTheWholeText) {
  Error e = Error::at(1, "bad").shift(4).locate("abc[xy]");
  EXPECT_EQ(e.span->column, 6);
  // Once located, shifting changes nothing.
  e.shift(3);
  EXPECT_EQ(e.span->begin, 5u);
}

TEST(Error, InnerSourceNameIsKept) {
  Error e = Error("bad").inSource("inner.npy").inSource("--input");
  EXPECT_EQ(e.source, "inner.npy");
}

TEST(Error, PrependKeepsThePosition) {
  Error e = Error::at(1, "bad").prepend("in %f: ").locate("abc");
  EXPECT_EQ(renderError(e), "1:2: error: in %f: bad\nabc\n ^");
}

Status failIf(bool fail) {
  if (fail)
    return Error("failed");
  return {};
}

Expected<int> half(int x) {
  if (x % 2)
    return Error::at(0, "odd");
  return x / 2;
}

TEST(Status, SuccessAndFailure) {
  Status good = failIf(false);
  EXPECT_TRUE(good.ok());
  Status bad = failIf(true);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "failed");
  EXPECT_EQ(bad.takeError().message, "failed");
  EXPECT_TRUE(success());
  static_assert(std::is_same_v<Status, Expected<void>>);
}

TEST(Expected, ValueAndError) {
  Expected<int> four = half(8);
  ASSERT_TRUE(four);
  EXPECT_EQ(*four, 4);
  Expected<int> odd = half(3);
  ASSERT_FALSE(odd);
  EXPECT_TRUE(odd.error().span.has_value());
  Status passed = odd.takeError();
  EXPECT_FALSE(passed);
}

} // namespace

namespace {
TEST(Error, KnownLineWithoutTheText) {
  Error e = Error::atLine(3, 5, "operand type mismatch").inSource("m.hlo");
  EXPECT_EQ(renderError(e), "m.hlo:3:5: error: operand type mismatch");
  // Given the text, the line is shown.
  e.locate("a\nb\n    add(x)\n");
  EXPECT_EQ(renderError(e), "m.hlo:3:5: error: operand type mismatch\n"
                            "    add(x)\n"
                            "    ^");
}
} // namespace
