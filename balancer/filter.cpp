#include "filter.hpp"

namespace dsm::lb {
namespace {

struct Step {
  RateFilter::State next;
  double h;  // share of the old value in the new one
};

// Table 5.1 of Siegell's thesis, indexed by state (down3 .. up3).
constexpr Step on_increase[] = {{RateFilter::down1, 1.0},    {RateFilter::constant, 1.0}, {RateFilter::up1, 1.0},
                                {RateFilter::up1, 0.8},      {RateFilter::up2, 0.6},      {RateFilter::up3, 0.4},
                                {RateFilter::up3, 0.2}};
constexpr Step on_decrease[] = {{RateFilter::down3, 0.1}, {RateFilter::down3, 0.1}, {RateFilter::down2, 0.2},
                                {RateFilter::down1, 0.3}, {RateFilter::down1, 0.4}, {RateFilter::down1, 0.5},
                                {RateFilter::constant, 0.6}};

}  // namespace

double filter_rate(RateFilter& f, double raw, bool enabled) {
  if (!enabled || !f.primed) {
    f.value = raw;
    f.primed = true;
    return raw;
  }
  const Step s = raw >= f.value ? on_increase[f.state] : on_decrease[f.state];
  f.state = s.next;
  f.value = s.h * f.value + (1 - s.h) * raw;
  return f.value;
}

}  // namespace dsm::lb
