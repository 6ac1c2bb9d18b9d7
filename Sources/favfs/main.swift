print("favfs")
