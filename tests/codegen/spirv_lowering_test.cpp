#include "spirv_test_util.h"
