#include "pareto_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace shiftop::app {
namespace {

constexpr double kWidth = 480, kHeight = 360, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

struct Axes {
  double x0, x1, y0, y1;  // time range (ms) and log10(error) range
  double px(double ms) const { return kLeft + (ms - x0) / (x1 - x0) * (kWidth - kLeft - kRight); }
  double py(double error) const {
    const double e = std::log10(std::max(error, 1e-300));
    return kTop + (y1 - e) / (y1 - y0) * (kHeight - kTop - kBottom);
  }
};

Axes axes_for(const TunePanel& panel) {
  double tmin = 1e300, tmax = 0, emin = 1e300, emax = 0;
  for (const TunePoint& p : panel.points) {
    tmin = std::min(tmin, p.milliseconds);
    tmax = std::max(tmax, p.milliseconds);
    if (p.relative_error > 0) {
      emin = std::min(emin, p.relative_error);
      emax = std::max(emax, p.relative_error);
    }
  }
  if (emax == 0) emin = emax = 1e-16;
  if (panel.tolerance > 0) {
    emin = std::min(emin, panel.tolerance);
    emax = std::max(emax, panel.tolerance);
  }
  const double pad = 0.05 * std::max(tmax - tmin, 1e-3);
  return {std::max(0.0, tmin - pad), tmax + pad, std::floor(std::log10(emin)) - 0.5,
          std::ceil(std::log10(emax)) + 0.5};
}

std::string panel_svg(const TunePanel& panel, double offset_x) {
  const Axes a = axes_for(panel);
  std::string s = fmt::format("<g transform=\"translate({},0)\">\n", offset_x);
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n",
      kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  s += fmt::format("<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
                   kWidth / 2, panel.title);
  for (int e = static_cast<int>(std::ceil(a.y0)); e <= static_cast<int>(std::floor(a.y1)); ++e) {
    const double y = a.py(std::pow(10.0, e));
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n",
                     kLeft, kWidth - kRight, y, y);
    s += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">1e{}</text>\n", kLeft - 5,
        y + 4, e);
  }
  for (int k = 0; k <= 4; ++k) {
    const double ms = a.x0 + (a.x1 - a.x0) * k / 4;
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{:.3g}</text>\n",
        a.px(ms), kHeight - kBottom + 16, ms);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">median time (ms)</text>\n",
      kWidth / 2, kHeight - 10);
  s += fmt::format(
      "<text x=\"16\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" "
      "transform=\"rotate(-90 16 {})\">relative error vs FP64</text>\n",
      kHeight / 2, kHeight / 2);
  if (panel.tolerance > 0) {
    const double y = a.py(panel.tolerance);
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\" "
        "stroke-dasharray=\"5,4\"/>\n",
        kLeft, kWidth - kRight, y, y);
  }
  std::vector<TunePoint> front;
  for (const TunePoint& p : panel.points)
    if (p.on_front) front.push_back(p);
  std::sort(front.begin(), front.end(),
            [](const TunePoint& l, const TunePoint& r) { return l.milliseconds < r.milliseconds; });
  std::string path;
  for (const TunePoint& p : front)
    path += fmt::format("{:.1f},{:.1f} ", a.px(p.milliseconds), a.py(p.relative_error));
  s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#c0392b\"/>\n", path);
  for (const TunePoint& p : panel.points) {
    const double err = p.relative_error > 0 ? p.relative_error : std::pow(10.0, a.y0 + 0.5);
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>\n",
        a.px(p.milliseconds), a.py(err), p.on_front ? 5 : 3, p.on_front ? "#c0392b" : "#2c7fb8",
        p.label());
    if (p.on_front)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">{}</text>\n",
                       a.px(p.milliseconds) + 6, a.py(err) - 6, p.label());
  }
  return s + "</g>\n";
}

}  // namespace

std::string TunePoint::label() const {
  if (kernel.empty() || precision.size() < 3 || precision[2] != 'S') return precision;
  return precision + " " + kernel.substr(0, kernel.find(' '));
}

std::string pareto_svg(const std::vector<TunePanel>& panels) {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth * static_cast<double>(panels.size()), kHeight);
  for (std::size_t k = 0; k < panels.size(); ++k)
    s += panel_svg(panels[k], kWidth * static_cast<double>(k));
  return s + "</svg>\n";
}

}  // namespace shiftop::app
