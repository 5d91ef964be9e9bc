#pragma once
// "a,b,,c" -> {"a", "b", "c"}: the comma lists of command lines and declared tables.
#include <sstream>
#include <string>
#include <vector>

namespace fsc {

inline std::vector<std::string> splitCommaList(const std::string& list) {
    std::vector<std::string> items;
    std::stringstream s(list);
    for (std::string item; std::getline(s, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

}  // namespace fsc
