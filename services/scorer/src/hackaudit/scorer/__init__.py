"""scorer"""
