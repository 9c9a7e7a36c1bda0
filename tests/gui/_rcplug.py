import sys, gc, pytest
@pytest.fixture(autouse=True)
def _rc(request):
    gc.collect()
    a, b = sys.getrefcount(True), sys.getrefcount(False)
    yield
    gc.collect()
    print(f"\n{request.node.name}: True {sys.getrefcount(True)-a:+d} False {sys.getrefcount(False)-b:+d}")
