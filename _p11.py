import numpy as np, tenferro as tf, warnings
from tenferro.tn import trg
def clock_tensor(beta, q=4):
    a = np.arange(q)
    c = np.cos(2*np.pi*(a[:,None]-a[None,:])/q)
    w = tf.exp(beta * tf.tensor(c))
    lam, v = tf.linalg.eigh(w)
    m = v * tf.sqrt(lam)[None, :]
    return tf.einsum("sl,su,sr,sd->lurd", m, m, m, m)
for chi in [4, 6, 10]:
    f = lambda b: trg(clock_tensor(b), chi, 3, progress=False)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        g = tf.grad(f)(tf.tensor(0.5)).item()
    h=1e-4
    fd = lambda b,h: (f(tf.tensor(b+h)).item()-f(tf.tensor(b-h)).item())/(2*h)
    print(chi, g, (4*fd(0.5,h/2)-fd(0.5,h))/3, sorted(set(str(w.message)[:60] for w in ws)))
