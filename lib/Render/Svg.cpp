//===- Svg.cpp - A minimal SVG document builder ---------------------------===//
#include "tessel/Render/Svg.h"

#include <cstdio>

namespace tessel {

static std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

SvgWriter::SvgWriter(double width, double height)
    : width(width), height(height) {}

void SvgWriter::rect(double x, double y, double w, double h,
                     const std::string &fill, const std::string &stroke,
                     double strokeWidth) {
  body += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
          "\" height=\"" + num(h) + "\" fill=\"" + escapeXml(fill) + "\"";
  if (stroke != "none")
    body += " stroke=\"" + escapeXml(stroke) + "\" stroke-width=\"" +
            num(strokeWidth) + "\"";
  body += "/>\n";
}

void SvgWriter::hatchedRect(double x, double y, double w, double h) {
  rect(x, y, w, h, "url(#padding)");
}

void SvgWriter::line(double x1, double y1, double x2, double y2,
                     const std::string &stroke, double strokeWidth) {
  body += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" +
          num(x2) + "\" y2=\"" + num(y2) + "\" stroke=\"" + escapeXml(stroke) +
          "\" stroke-width=\"" + num(strokeWidth) + "\"/>\n";
}

void SvgWriter::text(double x, double y, const std::string &content,
                     double size, const std::string &anchor,
                     const std::string &fill) {
  body += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" +
          num(size) + "\" text-anchor=\"" + anchor + "\" fill=\"" +
          escapeXml(fill) + "\">" + escapeXml(content) + "</text>\n";
}

std::string SvgWriter::finish() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " +
         num(height) +
         "\" font-family=\"monospace\" dominant-baseline=\"middle\">\n"
         "<defs><pattern id=\"padding\" width=\"6\" height=\"6\" "
         "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bbbbbb\" "
         "stroke-width=\"2\"/></pattern></defs>\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         body + "</svg>\n";
}

std::string tileColor(int64_t id) {
  static const char *kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                   "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                   "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  constexpr int64_t n = sizeof kPalette / sizeof kPalette[0];
  return kPalette[((id % n) + n) % n];
}

std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace tessel
