/*
 * bcryptprimitives.dll for Wine 8.0 (Debian 12's), which lacks it.
 *
 * Rust's standard library (1.78 and later) gets its random bytes (HashMap seeds) from
 * ProcessPrng in bcryptprimitives.dll, resolved when the program loads: without this DLL
 * every Rust program exits at once under Wine 8.0 with status 53. This one provides that
 * single function, forwarding to advapi32's RtlGenRandom (exported as SystemFunction036),
 * which Wine has. .ci/wine/runner builds it with mingw-w64 into the Wine prefix's system32.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Fills `data` with `length` random bytes; like Windows' own, it always returns TRUE. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            RaiseFailFastException(NULL, NULL, 0);
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
