#include "CCourierPosix.h"
