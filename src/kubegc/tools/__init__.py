"""Tools that explain deletions on any cluster (doctor, plan, tree, why).

They use only the client protocol, so they read kubegc, a real cluster or a dump alike.
"""
