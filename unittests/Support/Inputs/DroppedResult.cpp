// Compiled by the test TesselSupport.NodiscardStatus/NodiscardExpected:
// dropping a Status or an Expected must not compile (-Werror).
#include "tessel/Support/Expected.h"

tessel::Status check();
tessel::Expected<int> parse();

void caller() {
#ifdef DROP_EXPECTED
  parse();
#else
  check();
#endif
}
