// The hoop API the NCCL library is written against: hoop's public C API and nothing else.
#pragma once

#include "hoop/hoop.h"
#include "nccl/TEMPORARY_api_split.h"
