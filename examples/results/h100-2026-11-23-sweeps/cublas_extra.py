# cuBLAS through PyTorch for the shapes cublas.py lacks: the LLM shape (fp16, fp32 accumulation)
# and int8 (torch._int_mm, int8 x int8 -> int32, cuBLASLt). Same timing as cublas.py.
import torch, statistics
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
def timed(fn, iters=20):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts)
print(torch.cuda.get_device_name(0))
for (m, n, k) in [(4096, 512, 14336), (4096, 4096, 4096), (8192, 8192, 8192)]:
    a = torch.randn(m, k, device='cuda', dtype=torch.float16); b = torch.randn(k, n, device='cuda', dtype=torch.float16)
    print(f"cublas fp16->fp16(fp32acc)  {m}x{n}x{k}: {2*m*n*k/timed(lambda: a @ b)/1e12:8.1f} TFLOP/s", flush=True)
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192)]:
    a = torch.randint(-128, 127, (m, k), device='cuda', dtype=torch.int8); b = torch.randint(-128, 127, (k, n), device='cuda', dtype=torch.int8)
    try:
        print(f"cublas int8->int32 (_int_mm) {m}x{n}x{k}: {2*m*n*k/timed(lambda: torch._int_mm(a, b))/1e12:8.1f} TOPS", flush=True)
    except Exception as err:
        print(f"cublas int8 {m}x{n}x{k}: failed: {err}", flush=True)
