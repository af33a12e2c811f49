// Driver of the one-host versions: <app>_seq (plain C++) and <app>_omp (the same source
// built with -fopenmp, the hardware shared-memory reference). APP_OMP_FOR marks the loops
// OpenMP splits; without OpenMP it expands to nothing.
#pragma once

#include "app.hpp"

#ifdef _OPENMP
#define APP_OMP_FOR _Pragma("omp parallel for schedule(static)")
#else
#define APP_OMP_FOR
#endif
