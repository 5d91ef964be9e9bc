// scatter-rows: ScatterElements on axis 0 of a matrix whose indices are one row number per
// update row, expanded across the row (PyTorch's scatter_add(0, dst.unsqueeze(1).expand_as(m),
// m): a graph network's messages summed into their target nodes), is ScatterND of whole rows
// with the column of row numbers as its indices. The expanded index matrix, as large as the
// updates, is neither computed nor read, and each update moves as one row. Constant indices
// (fold-constants expanded a narrow layer's) whose rows each repeat one number go the same way.
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct ExpandedScatter {
    NodeId scatter;
    ValueId rowNumbers;                 // [E, 1] int64, or invalid: then
    std::vector<int64_t> constantRows;  // the first column of constant indices
};

class ExpandedScatterPattern : public TypedPattern<ExpandedScatter> {
public:
    std::string name() const override { return "scatter-rows"; }
    std::set<std::string> rootOps() const override { return {"ScatterElements"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& scatter = g.node(anchor);
        if (!isOp(scatter, "ScatterElements") || scatter.inputs.size() != 3 || scatter.outputs.size() != 1)
            return MatchResult::none();
        for (ValueId v : scatter.inputs)
            if (!v.valid()) return MatchResult::none();
        const auto data = staticDims(g, scatter.inputs[0]), updates = staticDims(g, scatter.inputs[2]),
                   expanded = staticDims(g, scatter.inputs[1]);
        const int64_t axis = intAttr(scatter, "axis", 0);
        // Constant indices folded from the Expand (a narrow layer's): each row one number.
        if (const Tensor* indices = rw.constant(scatter.inputs[1])) {
            if (!data || !updates || data->size() != 2 || (axis != 0 && axis != -2) || indices->dtype() != DType::Int64 ||
                indices->dims() != *updates || (*updates)[1] != (*data)[1] || (*updates)[1] <= 0)
                return MatchResult::none();
            const int64_t width = (*updates)[1];
            const int64_t* at = indices->dataAs<int64_t>();
            std::vector<int64_t> rows;
            for (int64_t r = 0; r < (*updates)[0]; ++r) {
                for (int64_t c = 1; c < width; ++c)
                    if (at[r * width + c] != at[r * width]) return MatchResult::none();
                rows.push_back(at[r * width]);
            }
            return MatchResult::matched(ExpandedScatter{anchor, ValueId{}, std::move(rows)});
        }
        const NodeId expandId = rw.producer(scatter.inputs[1]);
        if (!expandId.valid() || !isOp(g.node(expandId), "Expand")) return MatchResult::none();
        const ValueId column = g.node(expandId).inputs.empty() ? ValueId{} : g.node(expandId).inputs[0];
        const auto rows = column.valid() ? staticDims(g, column) : std::nullopt;
        if (!data || !updates || !expanded || !rows) return MatchResult::rejected("a shape is not known");
        if (data->size() != 2 || (axis != 0 && axis != -2)) return MatchResult::rejected("not axis 0 of a matrix");
        if (*expanded != *updates || rows->size() != 2 || (*rows)[1] != 1 || (*rows)[0] != (*updates)[0])
            return MatchResult::rejected("the indices are not one row number per update row");
        if ((*updates)[1] != (*data)[1]) return MatchResult::rejected("the updates are not whole rows");
        if (g.value(column).type.elemType != DType::Int64)
            return MatchResult::rejected("the row numbers are not int64 (ScatterND's indices)");
        return MatchResult::matched(ExpandedScatter{anchor, column});
    }

    std::string rewrite(Rewriter& rw, const ExpandedScatter& m) const override {
        const Node scatter = rw.graph().node(m.scatter);
        std::vector<Attribute> attributes;
        for (const Attribute& a : scatter.attributes)
            if (a.name == "reduction") attributes.push_back(a);
        ValueId rowNumbers = m.rowNumbers;
        if (!rowNumbers.valid())
            rowNumbers = rw.addConstant(int64Tensor("", {int64_t(m.constantRows.size()), 1}, m.constantRows),
                                        scatter.name + "/row_numbers");
        Node rows = makeNode("ScatterND", "", scatter, {scatter.inputs[0], rowNumbers, scatter.inputs[2]}, scatter.outputs,
                             attributes);
        rw.removeNode(m.scatter);
        rw.addNode(std::move(rows), m.scatter, {m.scatter});
        return "ScatterElements of whole rows by an expanded column of row numbers becomes ScatterND of rows";
    }
};

}  // namespace

std::unique_ptr<Pass> scatterRows() {
    return std::make_unique<PatternPass>("scatter-rows",
                                         "ScatterElements of whole rows by expanded row numbers becomes ScatterND",
                                         onePattern(std::make_unique<ExpandedScatterPattern>()));
}

}  // namespace fsc::passes
