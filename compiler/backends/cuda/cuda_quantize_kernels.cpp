// QuantizeLinear and DequantizeLinear on the device, per tensor: the host reads the one
// scale and zero point from the node's constants and one launch converts every element
// (kernels/quantize_kernel.h). Per-axis parameters decline and run on the CPU.
#include "compiler/backends/cuda/cuda_kernel_support.h"

namespace fsc::cudak {
namespace {

bool oneConstant(const KernelInit& init, size_t i) {
    const Tensor* t = init.constantInput(i);
    return t && t->numElements() == 1;
}

KernelFactory quantizeOp(bool dequantize) {
    return [dequantize](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::string op = init.node().opType;
        if (!oneConstant(init, 1) || (init.inputPresent(2) && !oneConstant(init, 2)))
            return declined(op + " on the device takes one constant scale and zero point (per tensor)");
        const DType out = declaredOutputType(init);
        if (!dequantize && out != DType::Int8 && out != DType::UInt8)
            return declined("QuantizeLinear on the device produces int8 or uint8 only");
        if (dequantize && out != DType::Undefined && !isFloatKind(out))
            return declined("DequantizeLinear on the device produces float32, float16 or bfloat16 only");
        return std::unique_ptr<Kernel>(new FunctionKernel([dequantize, out](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            const RtTensor* zero = ctx.input(2);
            if (!x || !scale || scale->numel() != 1 || (zero && zero->numel() != 1))
                return bad(ctx, "wants x and one scale and zero point");
            const DType outType = dequantize ? scale->dtype : out;
            auto inElem = elemType(x->dtype);
            auto outElem = elemType(outType);
            if (!inElem || !outElem) return unsupported(ctx, "no device element type for these dtypes");
            auto y = ctx.output(0, outType, x->dims);
            if (!y) return y.status();
            if ((*y)->numel() == 0) return Status::ok();
            DeviceLaunch l;
                        dk::QuantizeParams& p = l.set<dk::QuantizeParams>();
            p.in = x->data;
            p.out = (*y)->data;
            p.inType = *inElem;
            p.outType = *outElem;
            p.dequantize = dequantize;
            p.scale = elementAsDouble(*scale, 0);
            p.zero = zero ? elementAsDouble(*zero, 0) : 0.0;
            p.lo = outType == DType::Int8 ? -128.0 : 0.0;
            p.hi = outType == DType::Int8 ? 127.0 : 255.0;
            p.count = x->numel();
            l.extents = {extentOf(*x, false, "input"), extentOf(**y, true, "output")};
            l.geometry = dk::elementGeometry(p.count);
            return launch(ctx, l);
        }));
    };
}

}  // namespace

void registerQuantizeKernels(KernelRegistry& r) {
    // The scale and zero point are read on the host, once per run.
    addKernel(r, "", "QuantizeLinear", quantizeOp(false), "per_tensor", {1, 2});
    addKernel(r, "", "DequantizeLinear", quantizeOp(true), "per_tensor", {1, 2});
}

}  // namespace fsc::cudak
