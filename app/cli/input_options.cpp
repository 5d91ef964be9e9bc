#include "app/cli/input_options.h"

#include "core/parse_int.h"

namespace fsc::cli {

int parseInputOption(int argc, char** argv, int& i, InputChoice& choice, std::string& error) {
    const std::string s = argv[i];
    if (s != "--dim" && s != "--input" && s != "--input-dir") return 0;
    if (i + 1 >= argc) {
        error = s == "--dim" ? "--dim needs NAME=VALUE" : s == "--input" ? "--input needs NAME=FILE" : "--input-dir needs DIR";
        return -1;
    }
    const std::string v = argv[++i];
    if (s == "--input-dir") {
        choice.dir = v;
        return 1;
    }
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
        error = s == "--dim" ? "--dim needs NAME=VALUE" : "--input needs NAME=FILE";
        return -1;
    }
    if (s == "--input") {
        choice.files.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        return 1;
    }
    int64_t n = 0;
    if (!parseInt(v.substr(eq + 1), n) || n < 0) {
        error = "--dim needs NAME=VALUE with VALUE >= 0";
        return -1;
    }
    choice.dims[v.substr(0, eq)] = n;
    return 1;
}

}  // namespace fsc::cli
