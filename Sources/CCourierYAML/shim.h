// The system's libyaml (libyaml-dev), whose event stream the policy composer reads (CourierPolicy/Syntax).
#include <yaml.h>
