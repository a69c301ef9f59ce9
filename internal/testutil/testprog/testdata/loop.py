# A pure-Python loop for the user-stack tests and bench/ustack.sh: busy
# for argv[1] seconds in f().
import sys
import time


def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


t = time.time()
while time.time() - t < float(sys.argv[1]):
    f(100000)
