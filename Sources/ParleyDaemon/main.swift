print("parleyd")
