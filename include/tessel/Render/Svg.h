//===- Svg.h - A minimal SVG document builder -------------------*- C++ -*-===//
//
// The pictures tessel draws (tiled layouts, NPU local memory) are grids of
// labelled rectangles. SvgWriter collects shapes and prints a standalone SVG
// document; text is escaped.
//
//   SvgWriter svg(200, 100);
//   svg.rect(10, 10, 40, 20, "#8dd3c7");
//   svg.text(30, 24, "17");
//   std::string doc = svg.finish();   // "<svg xmlns=... </svg>"
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RENDER_SVG_H
#define TESSEL_RENDER_SVG_H

#include <cstdint>
#include <string>

namespace tessel {

class SvgWriter {
public:
  SvgWriter(double width, double height);

  /// A filled rectangle; `stroke` "none" for no border.
  void rect(double x, double y, double w, double h, const std::string &fill,
            const std::string &stroke = "none", double strokeWidth = 1);
  /// A rectangle filled with the diagonal hatch used for padding.
  void hatchedRect(double x, double y, double w, double h);
  void line(double x1, double y1, double x2, double y2,
            const std::string &stroke, double width = 1);
  /// Text centred at (x, y) unless `anchor` is "start" or "end".
  void text(double x, double y, const std::string &text, double size = 11,
            const std::string &anchor = "middle",
            const std::string &fill = "#222");
  std::string finish() const;

private:
  double width, height;
  std::string body;
};

/// A light fill colour for tile number `id`; neighbouring ids differ.
std::string tileColor(int64_t id);

/// Escapes &, <, >, " for SVG text and attributes.
std::string escapeXml(const std::string &text);

} // namespace tessel

#endif // TESSEL_RENDER_SVG_H
