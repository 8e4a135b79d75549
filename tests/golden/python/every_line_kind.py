# ---- Allocate
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((s0, ), (1, ), torch.float32)
    return ()

# ---- FreeIfNotReused
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        del buf0
    return ()

# ---- Reuse
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf1 = buf0; del buf0  # reuse
    return ()

# ---- Free
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        del arg0_1
    return ()

# ---- Null
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return ()

# ---- PoolCreate
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        pool0 = empty_strided_cuda((512, ), (1, ), torch.uint8)
    return ()

# ---- AllocFromPool
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if not ((4*s0 + 64) <= 512): raise RuntimeError('buffer buf0 carved from pool pool0 reaches past the storage it views: it needs %d bytes, the storage has %d' % (4*s0 + 64, 512))
        buf0 = alloc_from_pool(pool0, 64, torch.float32, (s0, ), (1, ))
    return ()

# ---- DeallocFromPool
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        del pool0
    return ()

# ---- CommBufferAllocate
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf3 = empty_strided_p2p((8, ), (1, ), torch.float32, torch.device('cuda:0'), group_name='0', alloc_id=17530221146885655328)
    return ()

# ---- CommBufferFree
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        del buf3 # symm_mem buffer free
    return ()

# ---- WorkspaceAllocate
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        workspace_0 = empty_strided_cuda((256, ), (1, ), torch.uint8)
        workspace_0.zero_()
    return ()

# ---- WorkspaceFree
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        del workspace_0
    return ()

# ---- DeviceCopy
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf1.copy_(arg0_1, False)
    return ()

# ---- Reinterpret
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if not (16 <= (4*s0)): raise RuntimeError('view buf2 of buf0 reaches past the storage it views: it needs %d bytes, the storage has %d' % (16, 4*s0))
        buf2 = reinterpret_tensor(buf0, (4, ), (1, ), 0)  # alias
    return ()

# ---- KernelDefinition
async_compile = AsyncCompile()


triton_poi_0 = async_compile.triton('triton_poi_0', '''@triton.jit
def k(): pass
''', device_str='cuda')


triton_poi_1 = async_compile.triton('triton_poi_1', '''@triton.jit
def c(): pass
''', device_str='cuda')


multi_kernel_0 = async_compile.triton('multi_kernel_0', '''def k(): pass
''', device_str='cuda')


def true_graph_0(args):
    arg0_1, = args
    args.clear()
    arg0_1_size = arg0_1.size()
    s0 = arg0_1_size[0]
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return (arg0_1, )


def false_graph_0(args):
    arg0_1, = args
    args.clear()
    arg0_1_size = arg0_1.size()
    s0 = arg0_1_size[0]
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return (arg0_1, )


def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return ()

# ---- KernelCall
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        stream0 = get_raw_stream(0)
        triton_poi_0.run(arg0_1, buf1, s0, stream=stream0)
    return ()

# ---- SymbolicCallArg
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        xnumel_0 = 4*s0
    return ()

# ---- MultiKernelDefinition
async_compile = AsyncCompile()


triton_poi_0 = async_compile.triton('triton_poi_0', '''@triton.jit
def k(): pass
''', device_str='cuda')


triton_poi_1 = async_compile.triton('triton_poi_1', '''@triton.jit
def c(): pass
''', device_str='cuda')


arg_index = {
    0: [slice(0, 3, None)],
    1: [slice(0, 3, None)],
}
multi_kernel_0 = async_compile.multi_kernel('multi_kernel_0', [
    triton_poi_0,
    triton_poi_1,
], arg_index=arg_index)


def true_graph_0(args):
    arg0_1, = args
    args.clear()
    arg0_1_size = arg0_1.size()
    s0 = arg0_1_size[0]
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return (arg0_1, )


def false_graph_0(args):
    arg0_1, = args
    args.clear()
    arg0_1_size = arg0_1.size()
    s0 = arg0_1_size[0]
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return (arg0_1, )


def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
    return ()

# ---- MultiKernelCall
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        stream0 = get_raw_stream(0)
        multi_kernel_0.run(arg0_1, buf1, s0, stream=stream0)
    return ()

# ---- ExternKernelAlloc
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf1 = aten.relu.default(arg0_1)
    return ()

# ---- ExternKernelOut
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        aten.relu.out(arg0_1, out=buf1)
    return ()

# ---- ExternKernelMultiOut
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        aten.aminmax.out(arg0_1, out0=buf0, out1=buf1)
    return ()

# ---- MultiOutput
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf1 = buf4['values']
    return ()

# ---- ScatterFallback
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        aten.scatter_(buf0,0,buf5,2.5, reduce='add')
    return ()

# ---- IndexPutFallback
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        aten.index_put_(buf0, [None, buf5], buf1, True)
    return ()

# ---- DynamicScalar
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        u0 = 1 if buf5.item() else 0
    return ()

# ---- UnbackedSymbolDefs
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        u0 = buf4[1].stride(0)
    return ()

# ---- AssertSizeStride
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        assert_size_stride(arg0_1, (s0, ), (1, ), 'aten.relu.default')
    return ()

# ---- AssertAlignment
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        assert_alignment(buf1, 16, 'aten.relu.default')
    return ()

# ---- AssertScalar
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if not (1 <= u0):
            raise RuntimeError('u0 >= 1')
    return ()

# ---- EnterSubgraph
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if True:  # subgraph: true_graph_0
            pass
    return ()

# ---- ExitSubgraph
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if True:  # subgraph: true_graph_0
            pass
    return ()

# ---- Conditional
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        if 4 < s0:
            true_graph_0_args = [arg0_1]
            (buf1,) = true_graph_0(true_graph_0_args)
        else:
            false_graph_0_args = [arg0_1]
            (buf1,) = false_graph_0(false_graph_0_args)
    return ()

# ---- WhileLoop
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf1 = arg0_1
        true_graph_0_args = [buf1]
        (true_graph_0_result,) = true_graph_0(true_graph_0_args)
        if not true_graph_0_result.item():
            buf1 = arg0_1.clone()
        while true_graph_0_result.item():
            false_graph_0_args = [buf1]
            (buf1,) = false_graph_0(false_graph_0_args)
            true_graph_0_args = [buf1]
            (true_graph_0_result,) = true_graph_0(true_graph_0_args)
    return ()

# ---- EnterDeviceContext
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(1):
        torch.cuda.set_device(1)
    return ()

# ---- ExitDeviceContext
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(1):
        torch.cuda.set_device(1)
    return ()

# ---- EnterStreamContext
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        with torch.cuda.stream(side_streams[(0, 2)]):
            pass
    return ()

# ---- ExitStreamContext
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        with torch.cuda.stream(side_streams[(0, 1)]):
            pass
    return ()

# ---- GetRawStream
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        stream0 = get_raw_stream(0)
    return ()

# ---- Comment
def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        # a comment
    return ()

